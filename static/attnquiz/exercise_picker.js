// The exercise picker without reloads: the search box and the skill and source filters narrow the list
// as you type (ticks are kept), each ticked exercise shows its place in the order, the
// button says how many will be added, and the form sends them in the order ticked.
// Without this file the same form works with full reloads (the server filters by ?q= and
// ?skill= and ?source= the same way, and the ticked exercises are added in the order listed).
(function () {
  "use strict";

  function words(text) {
    return String(text || "").toLocaleLowerCase().split(/\s+/).filter(Boolean);
  }

  function rowMatches(row, query, skill, source) {
    if (skill && (" " + row.getAttribute("data-skills") + " ").indexOf(" " + skill + " ") < 0) return false;
    if (source && row.getAttribute("data-source") !== source) return false;
    var haystack = row.getAttribute("data-search") || "";
    return words(query).every(function (word) { return haystack.indexOf(word) >= 0; });
  }

  function start() {
    var form = document.getElementById("picker-add");
    var search = document.getElementById("picker-search");
    if (!form || !search) return;
    var queryBox = document.getElementById("picker-q");
    var skillBox = document.getElementById("picker-skill");
    var sourceBox = document.getElementById("picker-source");
    var button = document.getElementById("picker-submit");
    var count = document.getElementById("picker-count");
    var chosenText = document.getElementById("picker-chosen");
    var rows = Array.prototype.slice.call(form.querySelectorAll(".aq-picker-row"));
    var order = []; // version ids, in the order ticked

    rows.forEach(function (row) {
      var box = row.querySelector("input[type=checkbox]");
      if (box && box.checked) order.push(box.value);
    });

    function titleOf(id) {
      var box = document.getElementById("pick-" + id);
      var label = box && form.querySelector("label[for='pick-" + id + "']");
      return label ? label.textContent.trim() : id;
    }

    function showOrder() {
      rows.forEach(function (row) {
        var box = row.querySelector("input[type=checkbox]");
        var badge = row.querySelector(".aq-picker-order");
        var place = box ? order.indexOf(box.value) : -1;
        if (badge) badge.textContent = place >= 0 ? String(place + 1) : "";
      });
      var n = order.length;
      button.textContent = n ? "Add " + n + " exercise" + (n === 1 ? "" : "s") : button.getAttribute("data-label-none");
      chosenText.textContent = n ? "Chosen, in this order: " + order.map(titleOf).join(", ") + "." : "";
    }

    function filter() {
      // Only a full list can be widened again here; a list the server already narrowed
      // is searched anew by the server (the form submits as without scripts).
      var query = queryBox.value, skill = skillBox.value, source = sourceBox ? sourceBox.value : "", shown = 0;
      rows.forEach(function (row) {
        var visible = rowMatches(row, query, skill, source);
        row.hidden = !visible;
        if (visible) shown += 1;
      });
      var filtered = query.trim() || skill || source;
      count.textContent = shown + (shown === 1 ? " exercise" : " exercises") +
        (filtered ? (shown === 1 ? " fits the search." : " fit the search.") : ".");
      // The address says what is shown, so a reload (the server's search) shows the same.
      var params = new URLSearchParams();
      if (query) params.set("q", query);
      if (skill) params.set("skill", skill);
      if (source) params.set("source", source);
      var queryString = params.toString();
      window.history.replaceState(null, "", window.location.pathname + (queryString ? "?" + queryString : ""));
    }

    if (form.getAttribute("data-filtered") === "0") {
      queryBox.addEventListener("input", filter);
      skillBox.addEventListener("change", filter);
      if (sourceBox) sourceBox.addEventListener("change", filter);
      search.addEventListener("submit", function (event) {
        event.preventDefault();
        filter();
      });
    }

    form.addEventListener("change", function (event) {
      var box = event.target;
      if (!box.matches || !box.matches("input[type=checkbox][name=version]")) return;
      var at = order.indexOf(box.value);
      if (box.checked && at < 0) order.push(box.value);
      if (!box.checked && at >= 0) order.splice(at, 1);
      showOrder();
    });

    // Send the ticked ids in the order they were ticked, not the order of the page.
    form.addEventListener("formdata", function (event) {
      var sent = event.formData.getAll("version");
      event.formData.delete("version");
      order.filter(function (id) { return sent.indexOf(id) >= 0; }).forEach(function (id) {
        event.formData.append("version", id);
      });
      sent.filter(function (id) { return order.indexOf(id) < 0; }).forEach(function (id) {
        event.formData.append("version", id);
      });
    });

    showOrder();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
