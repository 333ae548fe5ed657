// loadout UI: editing skills. The SKILL.md tab (editor, frontmatter form
// kept in step with the text, validation as you type, save with If-Match,
// the conflict view, the live notice), Copy to store and the New skill
// page. files.js uses window.loadoutEdit for the Files tab.
"use strict";
window.loadoutEdit = (function () {
  const L = window.loadout;
  const $ = (s, r) => (r || document).querySelector(s);
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
    }
    for (const k of kids) if (k != null) e.append(k);
    return e;
  };
  const skillURL = (name) => "/v1/skills/" + encodeURIComponent(name);
  // fileURL keeps the path in one URL segment (/ as %2F), so the browser
  // never resolves ../ itself: the server's one path check sees the path
  // as typed and answers with its own message.
  const fileURL = (name, path) => skillURL(name) + "/files/" + encodeURIComponent(path);

  // ---- frontmatter: read and rewrite the known fields in the text ----

  // The fields the form edits; a list field's separator ("," or " ").
  const FIELDS = ["name", "description", "version", "tags", "category", "requires-tools", "allowed-tools", "license", "compatibility"];
  // loadout's extension fields (skill.MetadataFields): the form writes them
  // under metadata, as strings (lists comma-separated), since the open
  // format allows only its own keys at the top level and `loadout
  // validate` refuses others. A top-level copy (older skills) is read
  // first, as the server does, and moved under metadata when edited.
  const META = new Set(["version", "tags", "category", "requires-tools"]);

  // fence finds the frontmatter: the lines between a first line "---"
  // and the next "---" line. null when the text has none.
  function fence(text) {
    const lines = text.split("\n");
    if (lines.length < 2 || lines[0].replace(/[ \t\r]+$/, "") !== "---") return null;
    for (let i = 1; i < lines.length; i++) {
      if (lines[i].replace(/[ \t\r]+$/, "") === "---") return { lines, end: i };
    }
    return null;
  }

  function unquote(v) {
    v = v.trim();
    if (v.length >= 2 && v[0] === '"' && v[v.length - 1] === '"') {
      try { return JSON.parse(v); } catch (e) { return v.slice(1, -1); }
    }
    if (v.length >= 2 && v[0] === "'" && v[v.length - 1] === "'") return v.slice(1, -1).replace(/''/g, "'");
    return v;
  }
  function stripComment(v) {
    // A " #" outside quotes starts a comment.
    let q = null;
    for (let i = 0; i < v.length; i++) {
      const c = v[i];
      if (q) { if (c === q) q = null; continue; }
      if (c === '"' || c === "'") q = c;
      else if (c === "#" && (i === 0 || /\s/.test(v[i - 1]))) return v.slice(0, i);
    }
    return v;
  }
  function splitFlow(inner) {
    const out = []; let cur = "", q = null;
    for (const c of inner) {
      if (q) { cur += c; if (c === q) q = null; continue; }
      if (c === '"' || c === "'") { q = c; cur += c; } else if (c === ",") { out.push(cur); cur = ""; } else cur += c;
    }
    if (cur.trim() !== "") out.push(cur);
    return out.map(unquote).filter((s) => s !== "");
  }

  // keyRange is where a top-level key's value sits: [start, end) lines.
  function keyRange(lines, end, key) {
    for (let i = 1; i < end; i++) {
      const m = /^([A-Za-z0-9_-]+)\s*:(.*)$/.exec(lines[i]);
      if (m && m[1] === key) {
        let j = i + 1;
        while (j < end && (/^[ \t]/.test(lines[j]) || /^-\s/.test(lines[j]) || lines[j].trim() === "")) j++;
        // trailing blank lines belong to the next key
        while (j > i + 1 && lines[j - 1].trim() === "") j--;
        return { start: i, end: j, rest: m[2] };
      }
    }
    return null;
  }

  // metaBlock is the metadata mapping's child lines: the key's range, the
  // children's indent and each child's [start, end) lines. null when
  // there is no block-style metadata key.
  function metaBlock(lines, end) {
    const r = keyRange(lines, end, "metadata");
    if (!r || stripComment(r.rest).trim() !== "") return r ? { r, flow: true } : null;
    let indent = "  ";
    const kids = [];
    for (let i = r.start + 1; i < r.end; i++) {
      const m = /^([ \t]+)(["']?)([A-Za-z0-9_.-]+)\2\s*:(.*)$/.exec(lines[i]);
      if (!m || (kids.length && m[1] !== indent)) continue;
      if (!kids.length) indent = m[1];
      let j = i + 1;
      while (j < r.end && (lines[j].trim() === "" || lines[j].startsWith(indent) && /^[ \t]/.test(lines[j].slice(indent.length)))) j++;
      while (j > i + 1 && lines[j - 1].trim() === "") j--;
      kids.push({ key: m[3], start: i, end: j, rest: m[4] });
    }
    return { r, indent, kids };
  }

  // flowPairs reads a flow mapping's "{a: b, c: d}" pairs.
  function flowPairs(rest) {
    const inner = stripComment(rest).trim().replace(/^\{/, "").replace(/\}\s*$/, "");
    const out = [];
    let cur = "", q = null;
    for (const c of inner + ",") {
      if (q) { cur += c; if (c === q) q = null; continue; }
      if (c === '"' || c === "'") { q = c; cur += c; } else if (c === ",") { if (cur.trim()) out.push(cur); cur = ""; } else cur += c;
    }
    return out.map((p) => { const i = p.indexOf(":"); return i < 0 ? null : [unquote(p.slice(0, i)), unquote(p.slice(i + 1))]; }).filter(Boolean);
  }

  // readFields returns the known fields as the form shows them (lists
  // joined by their separator), or null when there is no frontmatter.
  function readFields(text) {
    const f = fence(text);
    if (!f) return null;
    const out = {};
    const mb = metaBlock(f.lines, f.end);
    for (const key of FIELDS) {
      const r = keyRange(f.lines, f.end, key);
      if (!r && META.has(key) && mb) {
        let v = "";
        if (mb.flow) { const p = flowPairs(mb.r.rest).find((x) => x[0] === key); if (p) v = p[1]; }
        else { const k = mb.kids.find((x) => x.key === key); if (k) v = unquote([stripComment(k.rest)].concat(f.lines.slice(k.start + 1, k.end).map((l) => l.trim())).join(" ").trim()); }
        out[key] = v;
        continue;
      }
      if (!r) { out[key] = ""; continue; }
      const rest = stripComment(r.rest).trim();
      const more = f.lines.slice(r.start + 1, r.end);
      let val;
      if (rest.startsWith("[")) {
        val = splitFlow(rest.replace(/^\[/, "").replace(/\]\s*$/, ""));
      } else if (rest === "" && more.some((l) => /^\s*-\s/.test(l))) {
        val = more.filter((l) => /^\s*-\s/.test(l)).map((l) => unquote(stripComment(l.replace(/^\s*-\s/, ""))));
      } else if (/^[|>][+-]?\d*$/.test(rest)) {
        const folded = rest[0] === ">";
        const body = more.map((l) => l.replace(/^\s+/, ""));
        val = folded ? body.join(" ").replace(/\s+/g, " ").trim() : body.join("\n").trim();
      } else {
        val = unquote([rest].concat(more.map((l) => l.trim())).join(" ").trim());
      }
      if (Array.isArray(val)) val = val.join(key === "allowed-tools" ? " " : ", ");
      out[key] = String(val);
    }
    return out;
  }

  // yamlScalar writes a value as YAML: plain when that reads back the
  // same, else double-quoted (JSON's quoting is valid YAML).
  function yamlScalar(s) {
    if (s === "") return '""';
    const plainOK = /^[A-Za-z0-9_.\/(][^\n]*$/.test(s) && !/:\s|\s#|:$|^\s|\s$/.test(s) &&
      !/^(true|false|yes|no|on|off|null|~|-?\d[\d_.eE+-]*)$/i.test(s) && !/[\[\]{},&*!|>'"%@`]/.test(s[0]);
    return plainOK ? s : JSON.stringify(s);
  }
  function yamlValue(key, v) {
    const sep = key === "allowed-tools" ? /\s+/ : /\s*,\s*/;
    if (key === "tags" || key === "requires-tools") {
      const items = v.split(sep).map((s) => s.trim()).filter(Boolean);
      return "[" + items.map((s) => /^[A-Za-z0-9_.\/-]+$/.test(s) ? s : JSON.stringify(s)).join(", ") + "]";
    }
    if (key === "allowed-tools") return yamlScalar(v.split(sep).filter(Boolean).join(" "));
    return yamlScalar(v);
  }

  // setField rewrites one key's line(s) in the frontmatter: replaced in
  // place, added before the closing fence, or removed when empty. The
  // rest of the text is kept byte for byte. A text without frontmatter
  // gets one.
  function setField(text, key, value) {
    let f = fence(text);
    if (!f) {
      text = "---\n---\n" + text;
      f = fence(text);
    }
    const lines = f.lines.slice();
    const r = keyRange(lines, f.end, key);
    const v = value.trim();
    if (META.has(key)) return setMeta(lines, f.end, r, key, v);
    const line = key + ": " + yamlValue(key, v);
    if (r) {
      if (v === "") lines.splice(r.start, r.end - r.start);
      else lines.splice(r.start, r.end - r.start, line);
    } else if (v !== "") {
      // name and description first, as the spec writes them
      let at = f.end;
      if (key === "name") at = 1;
      else if (key === "description") { const n = keyRange(lines, f.end, "name"); at = n ? n.end : 1; }
      lines.splice(at, 0, line);
    }
    return lines.join("\n");
  }

  // setMeta writes an extension field under metadata (its top-level copy,
  // r, removed), as a string: a list joined by ", ". An empty value
  // removes the key, and metadata with it when nothing is left.
  function setMeta(lines, end, r, key, v) {
    if (r) { lines.splice(r.start, r.end - r.start); end -= r.end - r.start; }
    if (key === "tags" || key === "requires-tools") v = v.split(/\s*,\s*/).map((x) => x.trim()).filter(Boolean).join(", ");
    let mb = metaBlock(lines, end);
    if (mb && mb.flow) {
      // A flow mapping ({a: b}) becomes a block one, which the reference
      // validator reads (it refuses flow style).
      const pairs = flowPairs(mb.r.rest);
      const block = ["metadata:"].concat(pairs.map(([k, x]) => "  " + yamlScalar(k) + ": " + yamlScalar(x)));
      lines.splice(mb.r.start, mb.r.end - mb.r.start, ...block);
      end += block.length - (mb.r.end - mb.r.start);
      mb = metaBlock(lines, end);
    }
    const line = (ind) => ind + key + ": " + yamlScalar(v);
    if (!mb) {
      if (v !== "") lines.splice(end, 0, "metadata:", line("  "));
      return lines.join("\n");
    }
    const k = mb.kids.find((x) => x.key === key);
    if (k && v === "") {
      lines.splice(k.start, k.end - k.start);
      if (mb.kids.length === 1) lines.splice(mb.r.start, 1 + (mb.r.end - mb.r.start - 1) - (k.end - k.start));
    } else if (k) lines.splice(k.start, k.end - k.start, line(mb.indent));
    else if (v !== "") {
      const at = mb.kids.length ? mb.kids[mb.kids.length - 1].end : mb.r.start + 1;
      lines.splice(at, 0, line(mb.indent));
    }
    return lines.join("\n");
  }

  // ---- line diff (for the conflict view) ----

  // MAX_DIFF_CELLS bounds the diff's table (lines of one side times lines
  // of the other): larger texts are shown side by side without a diff.
  const MAX_DIFF_CELLS = 4_000_000;
  function lineDiff(a, b) {
    const A = a.split("\n"), B = b.split("\n");
    let s = 0;
    while (s < A.length && s < B.length && A[s] === B[s]) s++;
    let ea = A.length, eb = B.length;
    while (ea > s && eb > s && A[ea - 1] === B[eb - 1]) { ea--; eb--; }
    const a2 = A.slice(s, ea), b2 = B.slice(s, eb);
    if (a2.length * b2.length > MAX_DIFF_CELLS) return null;
    const n = a2.length, m = b2.length;
    const T = new Array(n + 1);
    for (let i = 0; i <= n; i++) T[i] = new Uint32Array(m + 1);
    for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) {
      T[i][j] = a2[i] === b2[j] ? T[i + 1][j + 1] + 1 : Math.max(T[i + 1][j], T[i][j + 1]);
    }
    const out = [];
    for (let k = Math.max(0, s - 2); k < s; k++) out.push({ op: " ", text: A[k], a: k + 1 });
    let i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a2[i] === b2[j]) { out.push({ op: " ", text: a2[i] }); i++; j++; }
      else if (j < m && (i >= n || T[i][j + 1] >= T[i + 1][j])) { out.push({ op: "+", text: b2[j] }); j++; }
      else { out.push({ op: "-", text: a2[i] }); i++; }
    }
    for (let k = ea; k < Math.min(A.length, ea + 2); k++) out.push({ op: " ", text: A[k] });
    return out;
  }

  // conflictView fills section with yours, theirs and the diff (theirs
  // against yours: - only in yours, + only in theirs), and two buttons.
  // onKeep() overwrites with yours (If-Match: their ETag, so a third
  // writer is still caught); onTake() loads theirs into the editor.
  function conflictView(section, idp, what, mine, theirs, onKeep, onTake) {
    section.replaceChildren();
    section.hidden = false;
    section.append(el("h3", { id: idp + "-conflict-h", text: "Conflict: " + what + " changed while you edited it" }));
    section.append(el("p", { text: "Someone saved a newer version after this page loaded. Nothing was overwritten. Compare, then keep yours (it replaces theirs) or take theirs (your edits are dropped)." }));
    const d = lineDiff(theirs, mine);
    const diff = el("div", { class: "diff", role: "region", "aria-label": "What changed: lines only in theirs (−) and only in yours (+)", tabindex: "0" });
    if (d === null) diff.append(el("p", { text: "The texts are too long to compare line by line; see both below." }));
    else if (!d.some((x) => x.op !== " ")) diff.append(el("p", { text: "The texts are the same." }));
    else for (const x of d) {
      diff.append(el("div", { class: "diff-line " + (x.op === "+" ? "add" : x.op === "-" ? "del" : "same") },
        el("span", { class: "diff-op", "aria-label": x.op === "+" ? "yours only" : x.op === "-" ? "theirs only" : "both", text: x.op === " " ? " " : x.op === "+" ? "+" : "−" }), el("span", { text: x.text })));
    }
    section.append(el("h4", { text: "What changed (− theirs, + yours)" }), diff);
    const grid = el("div", { class: "grid2" });
    grid.append(el("div", {}, el("h4", { text: "Yours" }), el("pre", { class: "conflict-mine", tabindex: "0", text: mine })));
    grid.append(el("div", {}, el("h4", { text: "Theirs (saved now)" }), el("pre", { class: "conflict-theirs", tabindex: "0", text: theirs })));
    section.append(grid);
    const keep = el("button", { type: "button", class: "danger", id: idp + "-keep-mine", text: "Keep mine (overwrite)" });
    const take = el("button", { type: "button", class: "secondary", id: idp + "-take-theirs", text: "Take theirs" });
    keep.addEventListener("click", () => { section.hidden = true; onKeep(); });
    take.addEventListener("click", () => { section.hidden = true; onTake(); });
    section.append(el("div", { class: "toolbar" }, keep, take));
    section.scrollIntoView({ block: "nearest" });
    keep.focus();
  }

  function isConflict(r) { return r.status === 409 || r.status === 412; }

  // createEditor mounts the bundle's editor in place of a textarea (the
  // no-script fallback), or keeps the textarea when the bundle is missing.
  function createEditor(holder, textarea, opts) {
    if (!window.loadoutEditor) return null;
    holder.hidden = false;
    if (textarea) textarea.hidden = true;
    return window.loadoutEditor.create(holder, opts);
  }

  // ---- live: another page or disk changed the catalog ----

  // onChanged calls f(detail) for catalog changes that may touch name
  // (live.js's detail: {generation, changed: [names], truncated}), and
  // takes the event over from live.js's default banner.
  function onChanged(name, f) {
    window.addEventListener("loadout:changed", (e) => {
      const d = e.detail || {};
      if (!d.truncated && Array.isArray(d.changed) && !d.changed.includes(name)) return;
      e.preventDefault();
      f(d);
    });
  }

  // ---- the SKILL.md tab ----

  function skillMD(root) {
    const name = root.dataset.name;
    const editable = root.dataset.editable === "true";
    let etag = root.dataset.etag;
    const ta = $("#md-text", root);
    let saved = ta.value;
    const status = $("#md-status", root);
    const say = (t, cls) => { if (status) { status.textContent = t; status.className = "status " + (cls || ""); } };
    const form = $("#fm-form", root);
    const inputs = form ? [...form.querySelectorAll("[data-key]")] : [];
    let ed = null;
    const text = () => (ed ? ed.text() : ta.value);
    const dirty = () => text() !== saved;

    // Text -> form: every field but the one being typed in.
    function fillForm(t) {
      if (!form) return;
      const v = readFields(t) || {};
      for (const i of inputs) if (document.activeElement !== i) i.value = v[i.dataset.key] || "";
    }
    // Form -> text.
    function fromForm(input) {
      const t = setField(text(), input.dataset.key, input.value);
      if (ed) ed.setText(t); else ta.value = t;
      changed();
    }
    const sizeEl = $("#md-size", root);
    function showSize() {
      const n = new TextEncoder().encode(text()).length;
      const warn = Number(root.dataset.warnSize || 0);
      sizeEl.textContent = n.toLocaleString() + " bytes" + (warn && n > warn ? " (over " + warn.toLocaleString() + ": see Problems)" : "") + (dirty() ? " · unsaved changes" : "");
      sizeEl.className = warn && n > warn ? "warning" : "";
    }
    let checkSeq = 0;
    const validate = L.debounce(async () => {
      const seq = ++checkSeq;
      const r = await L.api("POST", "/v1/check", { content: text(), name });
      if (seq !== checkSeq) return;
      const list = $("#md-diags", root);
      const count = $("#md-diag-count", root);
      list.replaceChildren();
      if (!r.ok) { count.textContent = "?"; list.append(el("li", { class: "error", text: "Could not check: " + L.message(r) })); return; }
      const ds = r.data.diagnostics || [];
      // Errors and warnings are problems; info lines are listed, not
      // counted (the count every page shows: docs/problems.md).
      const n = (r.data.errors || 0) + (r.data.warnings || 0);
      count.textContent = String(n);
      count.className = "badge " + (r.data.errors ? "err" : n ? "warn" : "ok");
      if (ed) ed.setDiagnostics(ds);
      if (!ds.length) list.append(el("li", { class: "muted", text: "No problems." }));
      for (const d of ds) {
        const li = el("li", { class: "diag diag-" + d.severity, "data-code": d.code, "data-line": String(d.line) });
        const where = d.line ? el("button", { type: "button", class: "link", text: "line " + d.line }) : el("span", { text: "whole text" });
        if (d.line) where.addEventListener("click", () => ed && ed.gotoLine(d.line));
        li.append(el("span", { class: "badge " + (d.severity === "error" ? "err" : d.severity === "warning" ? "warn" : ""), text: d.severity }), " ", where, " ",
          el("code", { text: d.code }), d.field ? " (" + d.field + ")" : "", ": " + d.message);
        list.append(li);
      }
    }, 250);
    function changed() {
      showSize(); validate();
      if (!editable) return;
      if (dirty()) say("Unsaved changes");
      else if (status.textContent === "Unsaved changes") say("");
    }

    ed = createEditor($("#md-editor", root), ta, {
      doc: ta.value, lang: "markdown", readOnly: !editable, label: "SKILL.md of " + name,
      onChange: (t, u) => { if (!u.transactions.some((tr) => tr.isUserEvent("loadout.set"))) fillForm(t); changed(); },
    });
    if (!ed) ta.addEventListener("input", () => { fillForm(ta.value); changed(); });
    fillForm(text());
    for (const i of inputs) i.addEventListener("input", () => fromForm(i));
    changed();

    // A change event that arrives while our own save is in flight is
    // looked at after it, when the page knows its new ETag.
    let saving = false, liveLater = false;
    async function save(ifMatch) {
      const mine = text();
      say("Saving…");
      saving = true;
      const r = await L.api("PUT", fileURL(name, "SKILL.md"), mine, { "If-Match": ifMatch, "Content-Type": "text/markdown; charset=utf-8" });
      saving = false;
      if (liveLater) { liveLater = false; setTimeout(live, 0); }
      if (r.ok) {
        etag = r.etag || etag; saved = mine;
        say("Saved: version " + (r.data && r.data.version), "ok");
        changed();
        return;
      }
      if (isConflict(r)) return conflict(mine);
      say("Not saved: " + L.message(r), "error");
    }
    async function fresh() {
      const r = await L.api("GET", skillURL(name));
      return r.ok ? { text: r.data.content, etag: r.etag, version: r.data.version } : null;
    }
    async function conflict(mine) {
      const t = await fresh();
      if (!t) { say("Not saved: the skill changed, and its current text could not be read.", "error"); return; }
      say("Not saved: someone else saved version " + t.version + " first.", "error");
      conflictView($("#md-conflict", root), "md", "SKILL.md", mine, t.text,
        () => save(t.etag),
        () => { etag = t.etag; saved = t.text; if (ed) ed.setText(t.text); else ta.value = t.text; fillForm(t.text); changed(); say("Took theirs: version " + t.version, "ok"); });
    }
    const saveBtn = $("#md-save", root);
    if (saveBtn) saveBtn.addEventListener("click", () => save(etag));
    root.addEventListener("keydown", (e) => {
      if ((e.ctrlKey || e.metaKey) && e.key === "s" && saveBtn) { e.preventDefault(); save(etag); }
    });
    window.addEventListener("beforeunload", (e) => { if (editable && dirty()) { e.preventDefault(); e.returnValue = ""; } });

    const notice = $("#md-changed", root);
    onChanged(name, () => live());
    async function live() {
      if (saving) { liveLater = true; return; }
      const t = await fresh();
      if (!t) { if (!dirty()) location.reload(); return; }
      if (t.etag && t.etag === etag || !editable && t.text === saved) return;
      if (editable && dirty()) {
        notice.replaceChildren("This skill changed elsewhere (now version " + t.version + "): reload to see it; your edits are kept here. Saving will show what changed. ",
          Object.assign(el("button", { type: "button", class: "link", text: "Reload (drops your edits)" }), { onclick: () => { saved = text(); location.reload(); } }));
        notice.hidden = false;
        return;
      }
      etag = t.etag || etag; saved = t.text;
      if (ed) ed.setText(t.text); else ta.value = t.text;
      fillForm(t.text); changed();
      notice.textContent = "Reloaded: this skill changed elsewhere (version " + t.version + ").";
      notice.hidden = false;
    }
    return { text, dirty, editor: () => ed };
  }

  // ---- Copy to store ----

  // renameDoc makes a portable document (an export) into skill newName:
  // its name fields and the frontmatter's name.
  function renameDoc(doc, newName) {
    doc.skill.name = newName;
    doc.skill.slug = newName;
    doc.skill.content = setField(doc.skill.content, "name", newName);
    delete doc.metadata;
    return doc;
  }
  function copyToStore() {
    const form = $("#copy-form");
    if (!form) return;
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const from = $("#copy-go").dataset.name;
      const to = $("#copy-name").value.trim();
      const err = $("#copy-error");
      err.textContent = "";
      const ex = await L.api("GET", skillURL(from) + "/export?format=json");
      if (!ex.ok) { err.textContent = "Could not read " + from + ": " + L.message(ex); return; }
      const existing = await L.api("GET", skillURL(to));
      if (existing.ok && existing.data.source && existing.data.source.kind === "store") {
        err.textContent = "The store already has a skill named " + to + " (version " + existing.data.version + "): nothing was written. Choose another name, or open /ui/skills/" + to + ".";
        return;
      }
      const r = await L.api("POST", "/v1/skills", renameDoc(ex.data, to));
      if (!r.ok) { err.textContent = "Not copied: " + L.message(r); return; }
      if (r.data.shadowedBy) {
        err.textContent = "Stored as " + to + " (version " + r.data.version + "), but the " + r.data.shadowedBy.kind + " skill of that name still wins it, so the catalog serves that one: remove it to serve the copy, or copy under another name.";
        return;
      }
      location.assign("/ui/skills/" + encodeURIComponent(to) + "?tab=skill-md");
    });
  }

  // ---- New skill ----

  function newSkill(form) {
    const st = $("#new-status");
    // The file as it will be saved: the frontmatter from the fields, then
    // the body; shown under the form as the author types.
    const contentOf = (name, description) => {
      let c = "---\n---\n\n" + $("#new-body").value.replace(/^\s+/, "");
      c = setField(setField(c, "name", name), "description", description);
      return c.endsWith("\n") ? c : c + "\n";
    };
    const preview = $("#new-preview");
    const show = () => { if (preview) preview.textContent = contentOf($("#new-name").value.trim() || "my-skill", $("#new-description").value.trim() || "Does X for Y. Use when the user asks for Z."); };
    form.addEventListener("input", show);
    show();
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      for (const x of form.querySelectorAll(".field-error")) x.textContent = "";
      const name = $("#new-name").value.trim(), description = $("#new-description").value.trim();
      const content = contentOf(name, description);
      st.textContent = "Creating…";
      const r = await L.api("POST", "/v1/skills", { schemaVersion: 2, skill: { name, description, content, files: [] } });
      if (r.ok) { location.assign("/ui/skills/" + encodeURIComponent(name) + "?tab=skill-md"); return; }
      st.textContent = "Not created: " + L.message(r);
      st.className = "status error";
      const e2 = r.data && r.data.error;
      const fields = new Set();
      for (const p of (e2 && e2.problems) || []) if (p.field) fields.add(p.field);
      if (e2 && e2.field) fields.add(e2.field);
      for (const f of fields) {
        const slot = $("#new-" + (f === "content" ? "description" : f) + "-error");
        if (slot) slot.textContent = ((e2.problems || []).filter((p) => p.field === f).map((p) => p.message).join("; ")) || e2.message;
      }
    });
  }

  // current is the open SKILL.md tab (for the browser tests and the
  // console): {text(), dirty(), editor()}.
  const pub = { readFields, setField, lineDiff, conflictView, createEditor, onChanged, fileURL, skillURL, isConflict, el, $, current: null };
  document.addEventListener("DOMContentLoaded", () => {
    const md = $("#skillmd");
    if (md) pub.current = skillMD(md);
    copyToStore();
    const nf = $("#new-form");
    if (nf) newSkill(nf);
  });

  return pub;
})();
