// loadout UI: the skills list filters as you type. The form works
// without this script (a GET of the same URL); with it, each change fetches
// that URL with partial=1, which returns only the results, and swaps them
// in, keeping the address bar in step so every state is a link.
//
// The listeners sit on the document and find the form and the results
// when they act: a live refresh (live.js) replaces <main>, and with it
// the elements a listener bound to them would have kept.
"use strict";
(function () {
  if (!document.getElementById("skills-filter")) return;
  let seq = 0;
  function query(form) {
    const p = new URLSearchParams();
    for (const [k, v] of new FormData(form)) {
      if (typeof v === "string" && v.trim() !== "") p.append(k, v.trim());
    }
    return p;
  }
  async function update() {
    const form = document.getElementById("skills-filter");
    const out = document.getElementById("skills-results");
    if (!form || !out) return;
    const p = query(form);
    const url = form.getAttribute("action") + (p.toString() ? "?" + p.toString() : "");
    p.set("partial", "1");
    const mine = ++seq;
    out.setAttribute("aria-busy", "true");
    let res;
    try {
      res = await fetch(form.getAttribute("action") + "?" + p.toString(), { credentials: "same-origin", headers: { "Accept": "text/html" } });
    } catch (e) {
      if (mine === seq) out.removeAttribute("aria-busy");
      return;
    }
    if (mine !== seq) return; // a newer request is on its way
    out.removeAttribute("aria-busy");
    if (!res.ok) { window.location.href = url; return; }
    out.innerHTML = await res.text();
    history.replaceState(null, "", url);
    // The results were replaced whole; the status line outside them is
    // what a screen reader announces.
    const count = document.getElementById("skills-count");
    const status = document.getElementById("skills-status");
    if (count && status) status.textContent = count.textContent;
    watchPending();
  }
  // While the server's safety checks run, the results say so
  // (#skills-pending) and are fetched again until they have the findings.
  let poll = null;
  function watchPending() {
    clearTimeout(poll);
    if (document.getElementById("skills-pending")) poll = setTimeout(update, 2000);
  }
  watchPending();
  window.addEventListener("loadout:refreshed", watchPending);
  const later = window.loadout ? window.loadout.debounce(update, 200) : update;
  const inForm = (ev) => ev.target instanceof Element && ev.target.closest("#skills-filter");
  document.addEventListener("input", function (ev) { if (inForm(ev)) later(); });
  document.addEventListener("change", function (ev) { if (inForm(ev)) later(); });
  document.addEventListener("submit", function (ev) { if (inForm(ev)) { ev.preventDefault(); update(); } });
})();
