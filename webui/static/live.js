// loadout UI: live updates. Loaded on every page (layout.html).
//
// It opens an EventSource on /ui/events. Whenever the catalog changes (a
// folder edited on disk, a write through this or another instance, a
// reload) it dispatches on window:
//
//   new CustomEvent("loadout:changed", {cancelable: true, detail: {
//     generation: 42,          // the server's catalog generation after the change
//     changed: ["deploy"],     // skills (that this caller can see) whose content
//                              // changed, appeared or went away; sorted, at most 100
//     truncated: false,        // true: more changed than listed, or which changed is
//                              // not known (a reconnect after missed events):
//                              // treat every skill as possibly changed
//   }})
//
// A page script that handles the change itself (an editor with unsaved
// edits that warns instead) calls event.preventDefault(); otherwise the
// default follows: list pages (skills, agents, diagnostics) fetch their
// own URL again and replace <main> in place (then "loadout:refreshed" is
// dispatched on window so page scripts can bind again), and any other
// page shows the #live banner "Skills changed: … [Refresh]".
//
// document.documentElement.dataset.live is "connected" while the stream is
// open and "reconnecting" while it is not. A closed stream (the server
// restarting, or answering 503 over its cap of streams) is opened again
// with backoff: 1 s doubling to 30 s, with jitter, asking for what was
// missed with ?since=GENERATION.
"use strict";
(function () {
  // The sign-in page has no session to stream for: the stream would answer
  // 401 and every retry would log a console error.
  if (!window.EventSource || location.pathname === "/ui/login") return;
  const root = document.documentElement;
  let gen = null;        // the last generation seen
  let es = null;
  let delay = 1000;
  let timer = null;
  let refreshing = null, again = false;
  // A form the browser itself sends (no page script took it) is taking
  // this page away. A change announced meanwhile, often that form's own
  // write, must not redraw or reload the page: a reload would cancel the
  // navigation, and the person would land on the old page instead of the
  // form's answer. Ten seconds at most, for a form answered with no page.
  let leaving = false;
  window.addEventListener("submit", (e) => {
    if (e.defaultPrevented) return;
    leaving = true;
    setTimeout(() => { leaving = false; }, 10000);
  });

  function isListPage() {
    const p = location.pathname;
    return p === "/ui/" || p === "/ui/agents" || p === "/ui/diagnostics" || p.startsWith("/ui/agents/");
  }

  function names(d) {
    const n = d.changed || [];
    if (!n.length) return "some skills";
    let s = n.slice(0, 5).join(", ");
    if (d.truncated) s += " and others";
    else if (n.length > 5) s += " and " + (n.length - 5) + " more";
    return s;
  }

  function banner(d) {
    const el = document.getElementById("live");
    if (!el) return;
    el.textContent = "";
    el.append("Skills changed: " + names(d) + ". ");
    const b = document.createElement("button");
    b.type = "button";
    b.className = "secondary live-refresh";
    b.textContent = "Refresh";
    b.addEventListener("click", () => location.reload());
    const x = document.createElement("button");
    x.type = "button";
    x.className = "link live-dismiss";
    x.textContent = "Dismiss";
    x.addEventListener("click", () => { el.hidden = true; });
    el.append(b, " ", x);
    el.hidden = false;
  }

  // refresh replaces <main> with the same page fetched again, keeping
  // what was typed in fields (by id) and the focus.
  async function refresh(d) {
    if (refreshing) { again = true; return refreshing; }
    refreshing = (async () => {
      try {
        const res = await fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } });
        if (!res.ok) { banner(d); return; }
        const doc = new DOMParser().parseFromString(await res.text(), "text/html");
        const fresh = doc.querySelector("main");
        const main = document.querySelector("main");
        if (!fresh || !main) { banner(d); return; }
        const focus = document.activeElement && main.contains(document.activeElement) ? document.activeElement.id : "";
        const values = {};
        main.querySelectorAll("input[id], select[id], textarea[id]").forEach((f) => {
          if (f.type === "checkbox" || f.type === "radio") values[f.id] = { checked: f.checked };
          else if (f.type !== "file") values[f.id] = { value: f.value };
        });
        main.replaceChildren(...Array.from(fresh.childNodes).map((n) => document.importNode(n, true)));
        for (const [id, v] of Object.entries(values)) {
          const f = document.getElementById(id);
          if (!f) continue;
          if ("checked" in v) f.checked = v.checked; else f.value = v.value;
        }
        if (focus) { const f = document.getElementById(focus); if (f) f.focus(); }
        const el = document.getElementById("live");
        if (el) {
          el.textContent = "Updated: " + names(d) + " changed.";
          el.hidden = false;
          clearTimeout(el._t);
          el._t = setTimeout(() => { el.hidden = true; }, 4000);
        }
        window.dispatchEvent(new CustomEvent("loadout:refreshed", { detail: d }));
      } catch (e) {
        banner(d);
      } finally {
        refreshing = null;
        if (again) { again = false; refresh(d); }
      }
    })();
    return refreshing;
  }

  function changed(d) {
    if (typeof d.generation === "number") gen = d.generation;
    if (leaving) return;
    const ev = new CustomEvent("loadout:changed", { cancelable: true, detail: d });
    if (!window.dispatchEvent(ev)) return;
    if (isListPage()) refresh(d); else banner(d);
  }

  function connect() {
    timer = null;
    es = new EventSource("/ui/events" + (gen !== null ? "?since=" + gen : ""));
    es.addEventListener("hello", (e) => {
      root.dataset.live = "connected";
      delay = 1000;
      try { const d = JSON.parse(e.data); if (gen === null) gen = d.generation; } catch (err) { /* keep gen */ }
    });
    es.addEventListener("changed", (e) => {
      let d;
      try { d = JSON.parse(e.data); } catch (err) { return; }
      changed(d);
    });
    es.addEventListener("error", () => {
      root.dataset.live = "reconnecting";
      if (es.readyState !== EventSource.CLOSED || timer) return;
      es = null;
      const wait = delay * (0.75 + Math.random() / 2);
      delay = Math.min(delay * 2, 30000);
      timer = setTimeout(connect, wait);
    });
  }

  window.addEventListener("pagehide", () => { if (es) { es.close(); es = null; } });
  window.addEventListener("pageshow", (e) => { if (e.persisted && !es && !timer) connect(); });
  connect();
})();
