// Keyboard shortcuts of rubric grading (a static file: the CSP forbids inline script).
// 1-9 toggle the rubric item with that data-shortcut; a letter follows the link or presses
// the button whose data-shortcut-key it is. Keys typed into a text field are left alone.
// Leaving an answer's page with ticks or a comment not saved (next waiting, j/p, a link,
// back, reload) asks first: before, "n" dropped them without a word.
(function () {
  "use strict";
  function typing(target) {
    if (!target) return false;
    var tag = target.tagName;
    if (tag === "TEXTAREA" || tag === "SELECT" || target.isContentEditable) return true;
    return tag === "INPUT" && !/^(checkbox|radio|button|submit)$/i.test(target.type);
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    var key = event.key;
    var box = document.querySelector('input[data-shortcut="' + key + '"]');
    if (box) {
      box.checked = !box.checked;
      box.focus();
      event.preventDefault();
      return;
    }
    var control = document.querySelector('[data-shortcut-key="' + key + '"]');
    if (control) {
      event.preventDefault();
      control.click();
    }
  });

  var form = document.getElementById("rubric-grade-form");
  if (!form) return;
  function state() {
    var parts = [];
    form.querySelectorAll("input[type=checkbox], textarea").forEach(function (field) {
      parts.push(field.type === "checkbox" ? (field.checked ? "1" : "0") : field.value);
    });
    return parts.join("\u0000");
  }
  var saved = state();
  var submitting = false;
  form.addEventListener("submit", function () { submitting = true; });
  window.addEventListener("beforeunload", function (event) {
    if (submitting || state() === saved) return;
    event.preventDefault();
    event.returnValue = "";  // the browser asks whether to leave; its own words
  });
})();
