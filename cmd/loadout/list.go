package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/skill"
)

func init() {
	commands["list"] = command{"list an agent's skills (or every configured skill)", runList}
}

// listedSkill is one row of `list --json`.
type listedSkill struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Location    string       `json:"location"`
	Dir         string       `json:"dir"`
	Source      skill.Origin `json:"source"`
	// Mode is how the agent has it: listed, inline, or hidden (loadable
	// but kept out of the listing by disable-model-invocation).
	Mode     string       `json:"mode"`
	Shadowed bool         `json:"shadowed,omitempty"`
	Version  string       `json:"version,omitempty"`
	Category string       `json:"category,omitempty"`
	Tags     []string     `json:"tags,omitempty"`
	Files    []skill.File `json:"files"`
}

func runList(ctx context.Context, e *env, args []string) int {
	var cf catalogFlags
	fs := newFlags(e, "list", "[--config F] [--agent ID] [--root DIR]... [--json] [FOLDER...]",
		"Lists the skills an agent has (with no --agent, every skill of every configured source),\nwith their source. Diagnostics go to stderr."+fmt.Sprintf(folderArgsHelp, "list"))
	cf.register(fs, true)
	cf.typedMeta = true // Raw and Metadata are never printed here
	fs.BoolVar(&cf.json, "json", false, `print {"skills":[…],"diagnostics":[…]} on stdout`)
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	cf.folderArgs(fs)
	defer limitBatchMemory(e)()
	sess, err := cf.open(ctx, e, false)
	if err != nil {
		return fail(e, err)
	}
	defer sess.close()
	l := sess.l
	// Rows are made one at a time as they are written: the output of
	// 50,000 skills is never held whole.
	entries := l.Entries()
	row := func(i int) listedSkill { return listRow(l, entries[i]) }
	if cf.json {
		if err := writeListJSONRows(e.stdout, len(entries), row, diagsOrEmpty(sess.diagnostics())); err != nil {
			return fail(e, err)
		}
		return 0
	}
	header := []string{"NAME", "MODE", "SOURCE", "FILES", "DESCRIPTION"}
	// Write errors are not reported, as tabwriter's never were here.
	_ = writeTable(e.stdout, len(entries)+1, func(i int, cells []string) []string {
		if i == 0 {
			return append(cells, header...)
		}
		r := row(i - 1)
		mode := r.Mode
		if r.Shadowed {
			mode += " (shadowed)"
		}
		// termText: a description or a folder may hold ESC, OSC or bidi
		// controls, which must not reach the terminal.
		return append(cells, termText(r.Name), mode, termText(sourceText(r.Source)), strconv.Itoa(len(r.Files)), clip(termText(oneLine(r.Description)), 60))
	})
	fmt.Fprintf(e.stdout, "\n%s", plural(len(entries), "skill", "skills"))
	if l.Spec.AgentID != catalog.GlobalID {
		fmt.Fprintf(e.stdout, " for agent %s", l.Spec.AgentID)
	}
	fmt.Fprintln(e.stdout)
	sess.printDiagnostics(e.stderr)
	return 0
}

// Table layout of `list`: text/tabwriter.NewWriter(w, tableMinWidth,
// tableTabWidth, tablePadding, ' ', 0).
const (
	tableMinWidth = 2
	tableTabWidth = 4
	tablePadding  = 2
)

// writeTable writes n lines of cells aligned in columns, byte for byte as
// text/tabwriter with the table layout above writes them tab-separated
// (the last cell of a line is not a column), without holding the table:
// cells(i, buf) appends line i's cells to buf, and is called twice per
// line, to measure the columns and then to write. Lines of different
// lengths, or a cell holding a byte tabwriter gives a meaning to (tab,
// line break, \v, \f, 0xff), make it write through tabwriter itself.
func writeTable(w io.Writer, n int, cells func(i int, buf []string) []string) error {
	var widths []int
	var buf []string
	count := -1
	for i := 0; i < n; i++ {
		buf = cells(i, buf[:0])
		if count >= 0 && len(buf) != count {
			// Lines of other lengths make column blocks of their own.
			return writeTabwriter(w, n, cells)
		}
		count = len(buf)
		for j, c := range buf {
			if strings.ContainsAny(c, "\t\n\v\f\xff") {
				return writeTabwriter(w, n, cells)
			}
			if j == len(buf)-1 {
				break
			}
			if j == len(widths) {
				widths = append(widths, tableMinWidth)
			}
			widths[j] = max(widths[j], utf8.RuneCountInString(c)+tablePadding)
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	for i := 0; i < n; i++ {
		buf = cells(i, buf[:0])
		for j, c := range buf {
			bw.WriteString(c)
			if j < len(buf)-1 {
				for k := utf8.RuneCountInString(c); k < widths[j]; k++ {
					bw.WriteByte(' ')
				}
			}
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// writeTabwriter is writeTable through text/tabwriter, which holds the
// table until it is flushed.
func writeTabwriter(w io.Writer, n int, cells func(i int, buf []string) []string) error {
	tw := tabwriter.NewWriter(w, tableMinWidth, tableTabWidth, tablePadding, ' ', 0)
	var buf []string
	for i := 0; i < n; i++ {
		buf = cells(i, buf[:0])
		io.WriteString(tw, strings.Join(buf, "\t")+"\n")
	}
	return tw.Flush()
}

func listRows(l *catalog.Loadout) []listedSkill {
	rows := []listedSkill{}
	for _, en := range l.Entries() {
		rows = append(rows, listRow(l, en))
	}
	return rows
}

// listRow is the row of one entry of l.
func listRow(l *catalog.Loadout, en *catalog.Entry) listedSkill {
	sk := en.Skill
	mode := entryMode(en)
	winner, _ := l.Lookup(sk.Name)
	files := sk.Files
	if files == nil {
		files = []skill.File{}
	}
	return listedSkill{Name: sk.Name, Description: sk.Description, Location: sk.Location, Dir: sk.Dir,
		Source: sk.OriginValue(), Mode: mode, Shadowed: winner != en, Version: sk.Meta.Version, Category: sk.Meta.Category,
		Tags: sk.Meta.Tags, Files: files}
}

// entryMode is how the agent has the entry: listed, inline, or hidden
// (listedSkill.Mode).
func entryMode(en *catalog.Entry) string {
	switch {
	case en.Inline:
		return "inline"
	case en.Skill.Hidden():
		return "hidden"
	}
	return "listed"
}

// sourceText says where a skill came from, for people: the folder, the
// store version and what it was imported from, or the plugin and its trust.
func sourceText(o skill.Origin) string {
	var s string
	switch o.Kind {
	case "plugin":
		s = fmt.Sprintf("plugin:%s (%s)", o.Plugin, o.Trust)
	case "folder":
		s = o.Root
	case "store":
		s = fmt.Sprintf("store v%d", o.Version)
	case "git", "index", "oci":
		return o.Kind + " " + o.RemoteText()
	default:
		s = o.Kind
	}
	if o.Provenance != "" {
		s += " from " + o.Provenance
	}
	return s
}

// oneLine joins the words of s with single spaces. ASCII text that is
// already so is returned as it is, without the copies: list calls it for
// every skill.
func oneLine(s string) string {
	plain := s == "" || s[0] != ' ' && s[len(s)-1] != ' '
	for i := 0; plain && i < len(s); i++ {
		c := s[i]
		plain = c >= 0x21 && c < 0x80 || c == ' ' && s[i+1] != ' '
	}
	if plain {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// clip cuts s to n characters, the last of them "…". Valid UTF-8 is cut
// in place; other text as []rune would, each bad byte then U+FFFD.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if utf8.ValidString(s) {
		i := 0
		for k := 0; k < n-1; k++ {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
		}
		return s[:i] + "…"
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// writeListJSON writes {"diagnostics": […], "skills": […]} exactly as
// writeJSON would, but one skill at a time: the output of 50,000 skills is
// never held in memory whole (writeJSON builds all of it, indented, before
// writing a byte).
func writeListJSON(w io.Writer, rows []listedSkill, diags []skill.Diagnostic) error {
	return writeListJSONRows(w, len(rows), func(i int) listedSkill { return rows[i] }, diags)
}

// writeListJSONRows is writeListJSON of n rows made one at a time by row.
func writeListJSONRows(w io.Writer, n int, row func(i int) listedSkill, diags []skill.Diagnostic) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	put := func(v any, prefix string) error {
		buf.Reset()
		enc.SetIndent(prefix, "  ")
		if err := enc.Encode(v); err != nil {
			return err
		}
		_, err := bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		return err
	}
	bw.WriteString("{\n  \"diagnostics\": ")
	if err := put(diags, "  "); err != nil {
		return err
	}
	bw.WriteString(",\n  \"skills\": ")
	if n == 0 {
		bw.WriteString("[]")
	} else {
		bw.WriteString("[")
		for i := range n {
			if i > 0 {
				bw.WriteString(",")
			}
			bw.WriteString("\n    ")
			r := row(i)
			if err := put(&r, "    "); err != nil {
				return err
			}
		}
		bw.WriteString("\n  ]")
	}
	bw.WriteString("\n}\n")
	return bw.Flush()
}
