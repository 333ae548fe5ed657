// loadout UI: the skills list filters as you type. The form works
// without this script (a GET of the same URL); with it, each change fetches
// that URL with partial=1, which returns only the results, and swaps them
// in, keeping the address bar in step so every state is a link.
"use strict";
(function () {
  const form = document.getElementById("skills-filter");
  const out = document.getElementById("skills-results");
  if (!form || !out) return;
  let seq = 0;
  function query() {
    const p = new URLSearchParams();
    for (const [k, v] of new FormData(form)) {
      if (typeof v === "string" && v.trim() !== "") p.append(k, v.trim());
    }
    return p;
  }
  async function update() {
    const p = query();
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
  }
  // While the server's safety checks run, the results say so
  // (#skills-pending) and are fetched again until they have the findings.
  let poll = null;
  function watchPending() {
    clearTimeout(poll);
    if (document.getElementById("skills-pending")) poll = setTimeout(async function () { await update(); watchPending(); }, 2000);
  }
  watchPending();
  const later = window.loadout ? window.loadout.debounce(update, 200) : update;
  form.addEventListener("input", later);
  form.addEventListener("change", later);
  form.addEventListener("submit", function (ev) { ev.preventDefault(); update(); });
})();
