// loadout UI: shared helpers. Every page script uses api() to call the
// JSON API with the session's CSRF token.
"use strict";
window.loadout = (function () {
  const csrf = () => document.querySelector('meta[name="csrf-token"]')?.content || "";
  // api calls the JSON API; it resolves to {ok, status, data, etag} and
  // never throws on an HTTP error, so callers show the server's message.
  async function api(method, url, body, headers) {
    const h = Object.assign({ "X-CSRF-Token": csrf(), "Accept": "application/json" }, headers || {});
    let payload = body;
    if (body !== undefined && !(body instanceof Blob) && !(body instanceof FormData) && typeof body !== "string" && !(body instanceof ArrayBuffer)) {
      payload = JSON.stringify(body);
      h["Content-Type"] = h["Content-Type"] || "application/json";
    }
    let res;
    try {
      res = await fetch(url, { method, body: payload, headers: h, credentials: "same-origin" });
    } catch (e) {
      return { ok: false, status: 0, data: { error: { code: "network", message: "The server could not be reached: " + e.message } } };
    }
    let data = null;
    const type = res.headers.get("Content-Type") || "";
    if (type.includes("json")) { try { data = await res.json(); } catch (e) { data = null; } }
    else { data = await res.text(); }
    return { ok: res.ok, status: res.status, data, etag: res.headers.get("ETag") };
  }
  // message is the human text of an API error body.
  function message(r) {
    if (r.data && r.data.error) return r.data.error.message || r.data.error.code;
    return "HTTP " + r.status;
  }
  function debounce(f, ms) { let t; return (...a) => { clearTimeout(t); t = setTimeout(() => f(...a), ms); }; }
  // A clamped description (the skill page's, two lines) gets its "more"
  // button only when the text is cut; the button toggles the whole text.
  function clamps() {
    for (const b of document.querySelectorAll(".desc-more[aria-controls]")) {
      const t = document.getElementById(b.getAttribute("aria-controls"));
      if (!t || b.dataset.bound) continue;
      b.dataset.bound = "1";
      // Measured again whenever the text's box changes size (fonts
      // loading, the window resized), so the button shows only when the
      // text is cut.
      const fit = () => { if (!t.classList.contains("open")) b.hidden = t.scrollHeight <= t.clientHeight + 2; };
      if (window.ResizeObserver) new ResizeObserver(fit).observe(t);
      fit();
      b.addEventListener("click", () => {
        const open = t.classList.toggle("open");
        b.setAttribute("aria-expanded", String(open));
        b.textContent = open ? "Show less" : "Show the whole description";
      });
    }
  }
  document.addEventListener("DOMContentLoaded", clamps);
  window.addEventListener("loadout:refreshed", clamps);
  return { api, message, debounce, csrf };
})();

// On a phone the main navigation folds behind the header's Menu button
// (app.css shows the button only at a phone's width); without scripts the
// button stays hidden and the navigation open.
(function () {
  const b = document.querySelector(".menu-toggle");
  if (!b) return;
  b.hidden = false;
  b.addEventListener("click", () => b.setAttribute("aria-expanded", b.getAttribute("aria-expanded") === "true" ? "false" : "true"));
})();
