/* The authoring pages' runs of an exercise source in the sandbox: the editor's live check
   ("Check and preview"), Save / Create draft, Import and the previews. One at a time per
   person: a request sent while an earlier run of the author's still goes on (typing on
   while a slow source is checked, Save while the check runs) is refused with 429, a
   message and Retry-After, and nothing was run or stored.

   - An htmx request (the check button, the preview form: [data-busy-retry] names the event
     that sends it again) gets its refusal swapped in, htmx not swapping an error reply, and
     is sent again after the Retry-After seconds: the latest text is checked once the
     earlier run has ended. A newer request of the same element cancels the wait.
   - A page drawn by a refused request (Save, Import, a preview page, a version page whose
     preview waits) carries [data-resend-after] on its notice: after that many seconds its
     form ([data-resend], the typed text or the kept file in it) is sent again, or the page
     reloaded ("reload"), a few times in a row at most.
   - A form marked [data-after-runs] (the editor's Save) waits for the page's own run in
     flight (the live check) before it is sent, and no check starts once it is on its way:
     Save pressed right after typing is not refused by the check it set off. Requests that
     share an hx-sync element with "queue all" (the picker's previews) go one at a time. */
(function () {
  "use strict";

  var MAX_RESENDS = 5;
  var RESENDS_FORGOTTEN_MS = 2 * 60 * 1000;
  var waiting = new Map(); // element -> timer of its next try
  var inFlight = new Set(); // elements whose run is on its way to the server
  var held = null; // {form, submitter}: a form that waits for the runs in flight
  var sending = false; // a [data-after-runs] form is on its way: no new run starts

  function retrySeconds(value) {
    var seconds = parseInt(value, 10);
    return isFinite(seconds) && seconds >= 1 ? Math.min(seconds, 60) : 2;
  }

  /* The element that sent the request: htmx fires beforeSwap on the target, so its
     detail.elt is the target; requestConfig.elt is the sender in every event. */
  function retryingSender(detail) {
    var sender = detail && detail.requestConfig ? detail.requestConfig.elt : null;
    return sender && sender.hasAttribute && sender.hasAttribute("data-busy-retry") ? sender : null;
  }

  /* Before htmx settles a new request against the one in flight (hx-sync "replace" would
     abort the check that Save waits for): while the page is being saved, none is issued. */
  document.addEventListener("htmx:confirm", function (event) {
    var elt = event.detail && event.detail.elt;
    if ((sending || held) && elt && elt.hasAttribute && elt.hasAttribute("data-busy-retry")) event.preventDefault();
  });

  document.addEventListener("htmx:beforeRequest", function (event) {
    var sender = retryingSender(event.detail);
    if (!sender) return;
    inFlight.add(sender);
    if (waiting.has(sender)) {
      window.clearTimeout(waiting.get(sender));
      waiting.delete(sender);
    }
  });

  document.addEventListener("htmx:beforeSwap", function (event) {
    var detail = event.detail;
    var sender = retryingSender(detail);
    if (!sender || detail.xhr.status !== 429) return;
    detail.shouldSwap = true;
    detail.isError = false;
    var seconds = retrySeconds(detail.xhr.getResponseHeader("Retry-After"));
    window.clearTimeout(waiting.get(sender));
    waiting.set(sender, window.setTimeout(function () {
      waiting.delete(sender);
      if (!sender.isConnected) return;
      if (sender.tagName === "FORM") sender.requestSubmit(); // htmx sends it, as on a click
      else htmx.trigger(sender, sender.getAttribute("data-busy-retry") || "click");
    }, seconds * 1000));
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    var sender = retryingSender(event.detail);
    if (!sender) return;
    inFlight.delete(sender);
    if (held && inFlight.size === 0) {
      var form = held.form, submitter = held.submitter;
      held = null;
      form.requestSubmit(submitter && submitter.isConnected ? submitter : undefined);
    }
  });

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.hasAttribute || !form.hasAttribute("data-after-runs")) return;
    if (inFlight.size) {
      event.preventDefault();
      held = { form: form, submitter: event.submitter || null };
      return;
    }
    sending = true;
    waiting.forEach(function (timer) { window.clearTimeout(timer); });
    waiting.clear();
  });

  // A page come back from the back-forward cache may check and save again.
  window.addEventListener("pageshow", function () {
    sending = false;
    held = null;
  });

  /* How many times in a row this page was sent again, kept across its reloads. */
  function resendCount(key) {
    try {
      var kept = JSON.parse(window.sessionStorage.getItem(key) || "null");
      return kept && Date.now() - kept.at < RESENDS_FORGOTTEN_MS ? kept.count : 0;
    } catch (error) {
      return 0;
    }
  }

  function rememberResends(key, count) {
    try {
      if (count) window.sessionStorage.setItem(key, JSON.stringify({ count: count, at: Date.now() }));
      else window.sessionStorage.removeItem(key);
    } catch (error) { /* storage off: each page tries at most once more */ }
  }

  function resendLater(notice) {
    var key = "aq-busy-resends:" + window.location.pathname;
    var count = resendCount(key);
    var note = notice.querySelector("[data-resend-note]");
    if (count >= MAX_RESENDS) {
      rememberResends(key, 0);
      if (note) note.textContent = notice.getAttribute("data-resend-give-up") || "";
      return;
    }
    var target = notice.getAttribute("data-resend");
    window.setTimeout(function () {
      if (target === "reload") {
        rememberResends(key, count + 1);
        window.location.reload();
        return;
      }
      var form = document.querySelector(target);
      if (!form) return;
      // A form sent by htmx answers in place: its 429 is retried above, not counted here.
      if (!form.hasAttribute("hx-get") && !form.hasAttribute("hx-post")) rememberResends(key, count + 1);
      form.requestSubmit();
    }, retrySeconds(notice.getAttribute("data-resend-after")) * 1000);
  }

  function start() {
    var notice = document.querySelector("[data-resend-after][data-resend]");
    if (notice) resendLater(notice);
    else rememberResends("aq-busy-resends:" + window.location.pathname, 0);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
