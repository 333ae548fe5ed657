// loadout UI: the import page. Files come from the file inputs or a drop
// (folders included, walked for their files with their relative paths),
// and go to POST /ui/import in one multipart request: one transaction.
"use strict";
(function () {
  const form = document.getElementById("import-form");
  if (!form) return;
  const zone = document.getElementById("dropzone");
  const input = document.getElementById("import-files");
  const folder = document.getElementById("import-folder");
  const chosen = document.getElementById("import-chosen");
  const status = document.getElementById("import-status");
  const results = document.getElementById("import-results");
  const rows = document.getElementById("import-rows");
  const maxBytes = Number(form.dataset.maxBytes || 0);
  let files = []; // [{file, name}] name: the path sent (folder/…/file)

  function size(n) {
    if (n < 1024) return n + " B";
    if (n < 1 << 20) return (n / 1024).toFixed(1) + " KB";
    return (n / (1 << 20)).toFixed(1) + " MB";
  }

  function show() {
    chosen.textContent = "";
    for (const [i, f] of files.entries()) {
      const li = document.createElement("li");
      li.append(f.name + " (" + size(f.file.size) + ") ");
      const rm = document.createElement("button");
      rm.type = "button";
      rm.className = "link";
      rm.textContent = "Remove";
      rm.setAttribute("aria-label", "Remove " + f.name);
      rm.addEventListener("click", () => { files.splice(i, 1); show(); });
      li.append(rm);
      chosen.append(li);
    }
    const total = files.reduce((a, f) => a + f.file.size, 0);
    status.className = "status";
    status.textContent = files.length ? files.length + " files chosen, " + size(total) + (maxBytes && total > maxBytes ? ": over the " + size(maxBytes) + " an import may hold" : "") : "";
    if (maxBytes && total > maxBytes) status.className = "status error";
  }

  function add(list, pathOf) {
    for (const f of list) files.push({ file: f, name: pathOf ? pathOf(f) : f.name });
    show();
  }

  input.addEventListener("change", () => { add(input.files); input.value = ""; });
  if (folder) folder.addEventListener("change", () => { add(folder.files, (f) => f.webkitRelativePath || f.name); folder.value = ""; });

  // walk reads a dropped folder's files with their paths.
  function walk(entry, prefix, out) {
    return new Promise((resolve) => {
      if (entry.isFile) {
        entry.file((f) => { out.push({ file: f, name: prefix + f.name }); resolve(); }, () => resolve());
        return;
      }
      const reader = entry.createReader();
      const all = [];
      const next = () => reader.readEntries(async (batch) => {
        if (!batch.length) {
          for (const e of all) await walk(e, prefix + entry.name + "/", out);
          resolve();
          return;
        }
        all.push(...batch);
        next();
      }, () => resolve());
      next();
    });
  }

  ["dragenter", "dragover"].forEach((t) => zone.addEventListener(t, (e) => { e.preventDefault(); zone.classList.add("over"); }));
  ["dragleave", "drop"].forEach((t) => zone.addEventListener(t, () => zone.classList.remove("over")));
  zone.addEventListener("drop", async (e) => {
    e.preventDefault();
    const items = Array.from(e.dataTransfer.items || []);
    const entries = items.map((it) => it.webkitGetAsEntry && it.webkitGetAsEntry()).filter(Boolean);
    if (entries.length && entries.some((en) => en.isDirectory)) {
      const out = [];
      for (const en of entries) await walk(en, "", out);
      files.push(...out);
      show();
      return;
    }
    add(e.dataTransfer.files);
  });

  function cell(tr, content) {
    const td = document.createElement("td");
    if (content instanceof Node) td.append(content); else td.textContent = content == null ? "" : String(content);
    tr.append(td);
    return td;
  }

  const labels = { created: "created", updated: "updated", unchanged: "unchanged", refused: "refused", skipped: "not written (another skill was refused)" };

  function render(data) {
    rows.textContent = "";
    for (const r of data.results || []) {
      const tr = document.createElement("tr");
      tr.dataset.skill = r.name || "";
      tr.dataset.action = r.action;
      const th = document.createElement("th");
      th.scope = "row";
      if (r.action === "created" || r.action === "updated" || r.action === "unchanged") {
        const a = document.createElement("a");
        a.href = "/ui/skills/" + encodeURIComponent(r.name);
        a.textContent = r.name;
        th.append(a);
      } else th.textContent = r.name || "(no name)";
      tr.append(th);
      cell(tr, r.from);
      const badge = document.createElement("span");
      badge.className = "badge " + (r.action === "refused" ? "err" : r.action === "skipped" ? "warn" : "ok");
      badge.textContent = labels[r.action] || r.action;
      cell(tr, badge);
      cell(tr, r.version || "");
      const why = cell(tr, "");
      why.className = "why";
      if (r.error) why.append(r.error);
      const probs = (r.problems || []).filter((p) => p.severity === "error" || r.action === "refused");
      if (probs.length) {
        const ul = document.createElement("ul");
        for (const p of probs) {
          const li = document.createElement("li");
          li.textContent = p.code + (p.field ? " (" + p.field + ")" : "") + (p.path ? " " + p.path : "") + ": " + p.message;
          ul.append(li);
        }
        why.append(ul);
      }
      rows.append(tr);
    }
    results.hidden = false;
  }

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!files.length) {
      status.className = "status error";
      status.textContent = "Choose or drop at least one file first.";
      input.focus();
      return;
    }
    const fd = new FormData();
    fd.append("csrf", window.loadout.csrf());
    if (document.getElementById("import-partial").checked) fd.append("partial", "1");
    for (const f of files) fd.append("file", f.file, f.name);
    const btn = document.getElementById("import-submit");
    btn.disabled = true;
    status.className = "status";
    status.textContent = "Importing…";
    const r = await window.loadout.api("POST", "/ui/import", fd);
    btn.disabled = false;
    if (r.data && r.data.results) {
      render(r.data);
      status.className = "status " + (r.ok ? "ok" : "error");
      status.textContent = r.data.message || "";
      if (r.ok) { files = []; chosen.textContent = ""; }
      return;
    }
    results.hidden = true;
    status.className = "status error";
    status.textContent = "The import was refused: " + window.loadout.message(r);
  });
})();
