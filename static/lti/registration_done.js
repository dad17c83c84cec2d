// LTI Dynamic Registration 1.0: tell the LMS that registration is finished so it closes
// the registration frame or window (section 3.6, "org.imsglobal.lti.close").
document.addEventListener("DOMContentLoaded", function () {
  var target = window.opener || window.parent;
  if (target && target !== window) {
    target.postMessage({ subject: "org.imsglobal.lti.close" }, "*");
  }
});
