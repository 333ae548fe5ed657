// loadout UI: the Files tab. Opens a file in the editor (text) or shows
// it as a download (binary); saves, adds, uploads, renames, deletes and
// sets the executable bit through the API with the page's ETag.
"use strict";
(function () {
  const L = window.loadout, E = window.loadoutEdit;
  const { $, el } = E;

  function init(root) {
    const name = root.dataset.name;
    const editable = root.dataset.editable === "true";
    let etag = root.dataset.etag;
    const status = $("#files-status", root);
    const say = (t, cls) => { status.textContent = t; status.className = "status " + (cls || ""); };
    const rawURL = (p) => "/ui/skills/" + encodeURIComponent(name) + "/files/" + p.split("/").map(encodeURIComponent).join("/");

    // The open file.
    let cur = null; // {path, saved, exec}
    let ed = null;
    const holder = $("#fv-editor", root);
    const fvStatus = $("#fv-status", root);
    const fvSay = (t, cls) => { if (fvStatus) { fvStatus.textContent = t; fvStatus.className = "status " + (cls || ""); } };
    const dirty = () => !!(cur && ed && ed.text() !== cur.saved);
    const langOf = (p) => /\.(md|markdown)$/i.test(p) ? "markdown" : /\.ya?ml$/i.test(p) ? "yaml" : "plain";

    const view = $("#file-view", root);
    const actions = $("#fv-actions", root);
    const closePanel = () => { const p = $("#fv-panel", root); if (p) p.replaceChildren(); };
    // show brings the file view to where the user looks: in a long tree the
    // view (beside the tree on a wide screen, below it on a phone) may be
    // off screen; its heading takes the focus, naming the file.
    function show() {
      const r = view.getBoundingClientRect();
      if (r.top < 0 || r.top > innerHeight - 80) view.scrollIntoView({ block: "start" });
      $("#fv-h", root).focus({ preventScroll: true });
    }

    async function open(btn) {
      const path = btn.dataset.path;
      if (dirty()) { fvSay("Save " + cur.path + " first (or undo your edits): it has unsaved changes.", "error"); show(); return; }
      for (const b of root.querySelectorAll(".file-open[aria-current]")) b.removeAttribute("aria-current");
      btn.setAttribute("aria-current", "true");
      $("#fv-h", root).textContent = path;
      closePanel();
      // One file's actions, in the view's header rather than on every row.
      if (actions) {
        actions.hidden = !editable || path === "SKILL.md";
        const ex = btn.dataset.exec === "true";
        const eb = $("#fv-exec", root);
        eb.textContent = ex ? "Clear executable" : "Set executable";
        eb.dataset.path = path; eb.dataset.exec = String(ex);
        $("#fv-rename", root).dataset.path = path;
        $("#fv-delete", root).dataset.path = path;
      }
      $("#fv-conflict", root).hidden = true;
      $("#fv-changed", root).hidden = true;
      const meta = $("#fv-meta", root);
      meta.textContent = (btn.dataset.type || "") + (btn.dataset.size ? " · " + Number(btn.dataset.size).toLocaleString() + (btn.dataset.size === "1" ? " byte" : " bytes") : "");
      const bin = $("#fv-binary", root);
      const tools = $("#fv-tools", root);
      if (ed) { ed.destroy(); ed = null; }
      holder.replaceChildren();
      if (btn.dataset.binary === "true") {
        bin.replaceChildren("A binary file: it is not shown here. ", el("a", { href: rawURL(path), download: path.split("/").pop(), text: "Download " + path }));
        bin.hidden = false; holder.hidden = true;
        if (tools) tools.hidden = true;
        cur = { path, binary: true };
        show();
        return;
      }
      bin.hidden = true;
      const res = await fetch(rawURL(path), { credentials: "same-origin" });
      const text = await res.text();
      if (!res.ok) { bin.textContent = "Could not read " + path + " (HTTP " + res.status + ")."; bin.hidden = false; return; }
      const ro = !editable || path === "SKILL.md";
      cur = { path, saved: text, exec: btn.dataset.exec === "true" };
      ed = E.createEditor(holder, null, { doc: text, lang: langOf(path), readOnly: ro, label: path + " of " + name,
        onChange: () => fvSay(dirty() ? "Unsaved changes" : "") });
      if (!ed) { holder.hidden = false; holder.append(el("pre", { text })); }
      if (tools) tools.hidden = ro;
      fvSay("");
      show();
    }
    for (const b of root.querySelectorAll(".file-open")) b.addEventListener("click", () => open(b));
    E.currentFile = () => ({ path: cur && cur.path, editor: ed });

    // A write answered 409/412: the conflict view for a text file, else a
    // message; either way nothing was overwritten.
    async function fresh(path) {
      const d = await L.api("GET", E.skillURL(name));
      if (!d.ok) return null;
      const f = await fetch(E.fileURL(name, path), { credentials: "same-origin" });
      return { etag: d.etag, version: d.data.version, text: f.ok ? await f.text() : "", gone: f.status === 404 };
    }

    // A change event during our own save is looked at after it.
    let saving = false, liveLater = false;
    async function saveFile(ifMatch) {
      if (!cur || !ed) return;
      const mine = ed.text(), path = cur.path;
      fvSay("Saving…");
      const h = { "If-Match": ifMatch, "Content-Type": "text/plain; charset=utf-8" };
      if (cur.exec) h["X-Executable"] = "true";
      saving = true;
      const r = await L.api("PUT", E.fileURL(name, path), mine, h);
      saving = false;
      if (liveLater) { liveLater = false; setTimeout(live, 0); }
      if (r.ok) { etag = r.etag || etag; cur.saved = mine; fvSay("Saved: version " + r.data.version, "ok"); return; }
      if (!E.isConflict(r)) { fvSay("Not saved: " + L.message(r), "error"); return; }
      const t = await fresh(path);
      if (!t) { fvSay("Not saved: the skill changed, and could not be read again.", "error"); return; }
      fvSay("Not saved: someone else saved version " + t.version + " first.", "error");
      E.conflictView($("#fv-conflict", root), "fv", path, mine, t.gone ? "(deleted)" : t.text,
        () => saveFile(t.etag),
        () => { etag = t.etag; cur.saved = t.text; ed.setText(t.text); fvSay("Took theirs: version " + t.version, "ok"); });
    }
    const saveBtn = $("#fv-save", root);
    if (saveBtn) saveBtn.addEventListener("click", () => saveFile(etag));

    // After a change of the tree, the page is reloaded to show it (the
    // server renders the tree); the status says what happened.
    // A file to open again after the reload (renamed: its new path).
    function reloadWith(msg, reopen) {
      sessionStorage.setItem("loadout-files-status", msg);
      if (reopen) sessionStorage.setItem("loadout-files-open", name + "\n" + reopen);
      location.reload();
    }
    const carried = sessionStorage.getItem("loadout-files-status");
    if (carried) { sessionStorage.removeItem("loadout-files-status"); say(carried, "ok"); }
    const again = sessionStorage.getItem("loadout-files-open");
    if (again) {
      sessionStorage.removeItem("loadout-files-open");
      const [n, p] = again.split("\n");
      const b = n === name && [...root.querySelectorAll(".file-open")].find((x) => x.dataset.path === p);
      if (b) open(b);
    }

    // Refusals: a write that lost a race says so and reloads nothing.
    function refused(r, what) {
      if (E.isConflict(r)) say(what + " not done: the skill changed since this page loaded (someone saved a newer version). Reload to see it; nothing was overwritten.", "error");
      else say(what + " not done: " + L.message(r), "error");
    }

    async function bytesOf(path) {
      const res = await fetch(E.fileURL(name, path), { credentials: "same-origin" });
      if (!res.ok) return null;
      return await res.blob();
    }

    // Add / upload.
    const add = $("#add-form", root);
    if (add) add.addEventListener("submit", async (e) => {
      e.preventDefault();
      const pathIn = $("#add-path", root), errEl = $("#add-path-error", root), up = $("#add-upload", root);
      errEl.textContent = ""; pathIn.removeAttribute("aria-invalid");
      const file = up.files && up.files[0];
      let path = pathIn.value.trim();
      if (!path && file) path = file.name;
      else if (path.endsWith("/") && file) path += file.name;
      if (!path) { errEl.textContent = "Give the file's path in the skill, like references/guide.md."; pathIn.setAttribute("aria-invalid", "true"); pathIn.focus(); return; }
      const h = { "If-Match": etag, "Content-Type": file ? (file.type || "application/octet-stream") : "text/plain; charset=utf-8" };
      if ($("#add-exec", root).checked) h["X-Executable"] = "true";
      const r = await L.api("PUT", E.fileURL(name, path), file ? file : "", h);
      if (r.ok) { reloadWith("Added " + path + ": version " + r.data.version); return; }
      const er = r.data && r.data.error;
      if (er && (er.field === "path" || (er.problems || []).some((p) => /^path-/.test(p.code)))) {
        errEl.textContent = er.message; pathIn.setAttribute("aria-invalid", "true"); pathIn.focus(); return;
      }
      refused(r, "Add");
    });

    // Executable bit: the same bytes written again with X-Executable.
    const execBtn = $("#fv-exec", root);
    if (execBtn) execBtn.addEventListener("click", async () => {
      const path = execBtn.dataset.path, on = execBtn.dataset.exec !== "true";
      const data = await bytesOf(path);
      if (!data) { say("Could not read " + path + " to change its executable bit.", "error"); return; }
      const r = await L.api("PUT", E.fileURL(name, path), data, { "If-Match": etag, "X-Executable": String(on), "Content-Type": "application/octet-stream" });
      if (r.ok) reloadWith((on ? "Set" : "Cleared") + " executable on " + path + ": version " + r.data.version, path);
      else refused(r, "Changing the executable bit");
    });

    // An inline panel under the open file's actions (delete's
    // confirmation, rename's new path): one at a time, Escape closes it.
    function panel(from, label, build) {
      const host = $("#fv-panel", root);
      host.replaceChildren();
      const p = el("div", { class: "row-panel", role: "group", "aria-label": label });
      const close = () => { p.remove(); from.focus(); };
      p.addEventListener("keydown", (e) => { if (e.key === "Escape") close(); });
      build(p, close);
      host.append(p);
      (p.querySelector("input") || p.querySelector("button")).focus();
    }

    // Delete, after a confirmation.
    const delBtn = $("#fv-delete", root);
    if (delBtn) delBtn.addEventListener("click", () => {
      const path = delBtn.dataset.path;
      panel(delBtn, "Delete " + path, (p, close) => {
        const yes = el("button", { type: "button", class: "danger small file-delete-yes", text: "Yes, delete " + path });
        const no = el("button", { type: "button", class: "secondary small", text: "Cancel" });
        no.addEventListener("click", close);
        yes.addEventListener("click", async () => {
          const r = await L.api("DELETE", E.fileURL(name, path), undefined, { "If-Match": etag });
          if (r.ok) reloadWith("Deleted " + path + ": version " + r.data.version);
          else { close(); refused(r, "Delete"); }
        });
        p.append(el("span", { text: "Delete " + path + "? Earlier versions keep it (Versions tab). " }), yes, " ", no);
      });
    });

    // Rename: one write of the whole skill (the export with the path
    // changed, PUT with If-Match), so it is atomic: either the file has its
    // new name and the old one is gone, or nothing changed.
    async function rename(from, to, errEl, input) {
      const bad = (m) => { errEl.textContent = m; input.setAttribute("aria-invalid", "true"); input.focus(); };
      const ex = await L.api("GET", E.skillURL(name) + "/export?format=json");
      if (!ex.ok) return bad("Not renamed: " + L.message(ex));
      const doc = ex.data;
      const files = doc.skill.files || [];
      const f = files.find((x) => x.path === from);
      if (!f) return bad("Not renamed: " + from + " is no longer in the skill; reload the page.");
      if (files.some((x) => x.path === to)) return bad("Not renamed: " + to + " exists already: delete it first or pick another path.");
      f.path = to;
      delete f.sha256;
      delete doc.metadata;
      const r = await L.api("PUT", E.skillURL(name), doc, { "If-Match": etag });
      if (r.ok) return reloadWith("Renamed " + from + " to " + to + ": version " + r.data.version, to);
      if (E.isConflict(r)) return bad("Not renamed: the skill changed since this page loaded; reload to see it. Nothing was overwritten.");
      const er = r.data && r.data.error;
      bad("Not renamed: " + ((er && (er.problems || []).map((x) => x.message).join("; ")) || L.message(r)));
    }
    const renBtn = $("#fv-rename", root);
    if (renBtn) renBtn.addEventListener("click", () => {
      const from = renBtn.dataset.path;
      panel(renBtn, "Rename " + from, (p, close) => {
        const id = "rename-" + Math.random().toString(36).slice(2);
        const input = el("input", { id, class: "rename-path", value: from, autocomplete: "off", spellcheck: "false", "aria-describedby": id + "-err" });
        const err = el("span", { id: id + "-err", class: "error field-error", role: "alert" });
        const go = el("button", { type: "submit", class: "small", text: "Rename" });
        const no = el("button", { type: "button", class: "secondary small", text: "Cancel" });
        no.addEventListener("click", close);
        const f = el("form", { class: "rename-form" }, el("label", { for: id, text: "New path of " + from }), input, go, no, err);
        f.addEventListener("submit", (e) => {
          e.preventDefault();
          err.textContent = ""; input.removeAttribute("aria-invalid");
          const to = input.value.trim();
          if (to && to !== from) rename(from, to, err, input);
        });
        p.append(f);
      });
    });

    // Live: another writer or the disk changed this skill.
    E.onChanged(name, () => live());
    async function live() {
      if (saving) { liveLater = true; return; }
      const d = await L.api("GET", E.skillURL(name));
      if (d.ok && d.etag && d.etag === etag) return;
      if (dirty()) {
        const n = $("#fv-changed", root);
        n.textContent = "This skill changed elsewhere: reload to see it; your edits of " + cur.path + " are kept here.";
        n.hidden = false;
        return;
      }
      location.reload();
    }
    window.addEventListener("beforeunload", (e) => { if (editable && dirty()) { e.preventDefault(); e.returnValue = ""; } });
  }

  document.addEventListener("DOMContentLoaded", () => {
    const root = $("#files");
    if (root) init(root);
  });
})();
