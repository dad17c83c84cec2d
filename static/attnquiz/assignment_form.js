// The assignment form's review preset fills the six review fields as soon as it is chosen
// (the server applies the same preset on save). The values come from the select's
// data-presets attribute; a static file because the CSP forbids inline script.
(function () {
  "use strict";
  function apply(select) {
    var presets;
    try { presets = JSON.parse(select.getAttribute("data-presets") || "{}"); } catch (e) { return; }
    var chosen = presets[select.value];
    if (!chosen) return;
    Object.keys(chosen).forEach(function (name) {
      var field = select.form && select.form.elements[name];
      if (field) field.value = chosen[name];
    });
  }
  document.addEventListener("change", function (event) {
    if (event.target.matches && event.target.matches("select[data-presets]")) apply(event.target);
  });
})();
