// Keyboard shortcuts of rubric grading (a static file: the CSP forbids inline script).
// 1-9 toggle the rubric item with that data-shortcut; a letter follows the link or presses
// the button whose data-shortcut-key it is. Keys typed into a text field are left alone.
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
})();
