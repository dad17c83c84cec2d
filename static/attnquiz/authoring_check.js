/* The editor's live check (templates/authoring/editor.html, "Check and preview").
   One check at a time per person: a check sent while an earlier one of the author's still
   runs on the server (typing on while a slow source is checked) is refused with 429 and a
   message. htmx does not swap an error reply, so here the message replaces the result, and
   the check is sent again after the reply's Retry-After seconds: the latest text is checked
   once the earlier check has ended. A newer check (more typing, a click) cancels the wait. */
(function () {
  "use strict";

  var again = null;

  /* The button that sent the request: htmx fires beforeSwap on the target (#check-result),
     so its detail.elt is the target; requestConfig.elt is the button in every event. */
  function checkButton(detail) {
    var sender = detail && detail.requestConfig ? detail.requestConfig.elt : null;
    return sender && sender.id === "check-button" ? sender : null;
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    if (checkButton(event.detail)) window.clearTimeout(again);
  });

  document.addEventListener("htmx:beforeSwap", function (event) {
    var detail = event.detail;
    var button = checkButton(detail);
    if (!button || detail.xhr.status !== 429) return;
    detail.shouldSwap = true;
    detail.isError = false;
    var seconds = parseInt(detail.xhr.getResponseHeader("Retry-After"), 10) || 2;
    window.clearTimeout(again);
    again = window.setTimeout(function () { htmx.trigger(button, "click"); }, seconds * 1000);
  });
})();
