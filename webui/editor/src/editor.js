// The loadout UI's editor: CodeMirror 6 with Markdown (YAML frontmatter)
// and YAML highlighting, line numbers, and diagnostics shown at their
// line. Bundled by `go generate ./webui` into webui/static/editor.js; the
// pages use it through window.loadoutEditor.
//
// CSP: the UI sends style-src 'self' with no nonce and no 'unsafe-inline',
// which blocks the <style> element CodeMirror's style-mod would add to
// <head>. Constructed stylesheets (document.adoptedStyleSheets) are not
// subject to style-src, and style-mod already uses them for shadow roots,
// so the editor's styles are mounted through a stand-in root that has no
// <head> and forwards adoptedStyleSheets to the document. Inline styles
// CodeMirror sets go through the CSSOM (el.style), which CSP allows.
import { StyleModule } from "style-mod";
import { EditorState, StateField, StateEffect, RangeSetBuilder, Compartment } from "@codemirror/state";
import { EditorView, Decoration, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection, keymap, gutter, GutterMarker } from "@codemirror/view";
import { Language, LanguageSupport, defineLanguageFacet, syntaxHighlighting, bracketMatching, indentOnInput } from "@codemirror/language";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { yaml, yamlFrontmatter } from "@codemirror/lang-yaml";
import { parser as mdParser, GFM } from "@lezer/markdown";
import { classHighlighter } from "@lezer/highlight";

const rootFor = new WeakMap();
function cspRoot(doc) {
  let r = rootFor.get(doc);
  if (!r) {
    r = {
      ownerDocument: doc,
      get adoptedStyleSheets() { return doc.adoptedStyleSheets; },
      set adoptedStyleSheets(v) { doc.adoptedStyleSheets = v; },
    };
    rootFor.set(doc, r);
  }
  return r;
}
const mount = StyleModule.mount;
StyleModule.mount = function (root, modules, options) {
  if (root && root.head && root.adoptedStyleSheets && root.defaultView && root.defaultView.CSSStyleSheet) {
    root = cspRoot(root);
  }
  return mount.call(StyleModule, root, modules, options);
};

// Markdown with GFM (tables, task lists, strikethrough) and the YAML
// frontmatter of a SKILL.md, without @codemirror/lang-markdown's HTML
// and code-block languages, which would triple the bundle.
const markdownLanguage = new Language(defineLanguageFacet({}), mdParser.configure([GFM]), [], "markdown");
const markdown = () => yamlFrontmatter({ content: new LanguageSupport(markdownLanguage) });

function languageFor(lang) {
  if (lang === "markdown") return markdown();
  if (lang === "yaml") return yaml();
  return [];
}

// Diagnostics: a line class and a gutter marker per diagnostic line.
const setDiags = StateEffect.define();
class DiagMarker extends GutterMarker {
  constructor(sev, text) { super(); this.sev = sev; this.text = text; }
  eq(o) { return o.sev === this.sev && o.text === this.text; }
  toDOM() {
    const s = document.createElement("span");
    s.className = "cm-diag-mark cm-diag-" + this.sev;
    s.textContent = this.sev === "error" ? "●" : "▲";
    s.title = this.text;
    s.setAttribute("aria-label", this.sev + ": " + this.text);
    return s;
  }
}
const diagField = StateField.define({
  create() { return []; },
  update(v, tr) {
    for (const e of tr.effects) if (e.is(setDiags)) return e.value;
    return v;
  },
});
function byLine(state, diags) {
  const m = new Map();
  for (const d of diags) {
    if (!d.line || d.line < 1 || d.line > state.doc.lines) continue;
    const cur = m.get(d.line) || { sev: "warning", texts: [] };
    if (d.severity === "error") cur.sev = "error";
    cur.texts.push((d.code ? d.code + ": " : "") + d.message);
    m.set(d.line, cur);
  }
  return [...m.entries()].sort((a, b) => a[0] - b[0]);
}
const diagDecorations = EditorView.decorations.compute([diagField, "doc"], (state) => {
  const b = new RangeSetBuilder();
  for (const [line, v] of byLine(state, state.field(diagField))) {
    const l = state.doc.line(line);
    b.add(l.from, l.from, Decoration.line({ class: "cm-diag-line cm-diag-line-" + v.sev, attributes: { "data-diag-line": String(line), title: v.texts.join("\n") } }));
  }
  return b.finish();
});
const diagGutter = gutter({
  class: "cm-diag-gutter",
  markers(view) {
    const b = new RangeSetBuilder();
    for (const [line, v] of byLine(view.state, view.state.field(diagField))) {
      const l = view.state.doc.line(line);
      b.add(l.from, l.from, new DiagMarker(v.sev, v.texts.join("\n")));
    }
    return b.finish();
  },
});

// create makes an editor in parent. opts: doc, lang ("markdown", "yaml"
// or anything else for plain text), readOnly, label (the accessible
// name), onChange(text).
function create(parent, opts) {
  opts = opts || {};
  const editable = new Compartment();
  const ro = (v) => [EditorState.readOnly.of(v), EditorView.editable.of(!v)];
  const exts = [
    lineNumbers(), highlightActiveLineGutter(), diagGutter, history(), drawSelection(),
    indentOnInput(), bracketMatching(), highlightActiveLine(), EditorView.lineWrapping,
    syntaxHighlighting(classHighlighter),
    keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
    diagField, diagDecorations, languageFor(opts.lang), editable.of(ro(!!opts.readOnly)),
    EditorView.contentAttributes.of({ "aria-label": opts.label || "Editor" }),
    EditorView.updateListener.of((u) => { if (u.docChanged && opts.onChange) opts.onChange(u.state.doc.toString(), u); }),
  ];
  const view = new EditorView({ state: EditorState.create({ doc: opts.doc || "", extensions: exts }), parent });
  return {
    view,
    text: () => view.state.doc.toString(),
    // setText replaces the whole text (from the form or a reload); it
    // does not call onChange's caller back into a loop: the update has
    // userEvent "loadout.set".
    setText(s) {
      if (s === view.state.doc.toString()) return;
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: s }, userEvent: "loadout.set" });
    },
    // replaceRange swaps the lines [fromLine, toLine) for text, keeping the
    // rest of the document (and so the undo history) untouched.
    replaceRange(from, to, insert) { view.dispatch({ changes: { from, to, insert }, userEvent: "loadout.set" }); },
    setDiagnostics(diags) { view.dispatch({ effects: setDiags.of(diags || []) }); },
    setReadOnly(v) { view.dispatch({ effects: editable.reconfigure(ro(v)) }); },
    gotoLine(n) {
      if (n < 1 || n > view.state.doc.lines) return;
      const l = view.state.doc.line(n);
      view.dispatch({ selection: { anchor: l.from }, scrollIntoView: true });
      view.focus();
    },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}

window.loadoutEditor = { create };
