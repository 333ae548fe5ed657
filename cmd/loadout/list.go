package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	sess, err := cf.open(ctx, e, false)
	if err != nil {
		return fail(e, err)
	}
	defer sess.close()
	l := sess.l
	rows := listRows(l)
	if cf.json {
		if err := writeListJSON(e.stdout, rows, diagsOrEmpty(sess.diagnostics())); err != nil {
			return fail(e, err)
		}
		return 0
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tMODE\tSOURCE\tFILES\tDESCRIPTION")
	for _, r := range rows {
		mode := r.Mode
		if r.Shadowed {
			mode += " (shadowed)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", r.Name, mode, sourceText(r.Source), len(r.Files), clip(oneLine(r.Description), 60))
	}
	tw.Flush()
	fmt.Fprintf(e.stdout, "\n%s", plural(len(rows), "skill", "skills"))
	if l.Spec.AgentID != catalog.GlobalID {
		fmt.Fprintf(e.stdout, " for agent %s", l.Spec.AgentID)
	}
	fmt.Fprintln(e.stdout)
	printDiags(e.stderr, sess.diagnostics())
	return 0
}

func listRows(l *catalog.Loadout) []listedSkill {
	rows := []listedSkill{}
	for _, en := range l.Entries() {
		sk := en.Skill
		mode := "listed"
		switch {
		case en.Inline:
			mode = "inline"
		case sk.Hidden():
			mode = "hidden"
		}
		winner, _ := l.Lookup(sk.Name)
		files := sk.Files
		if files == nil {
			files = []skill.File{}
		}
		rows = append(rows, listedSkill{Name: sk.Name, Description: sk.Description, Location: sk.Location, Dir: sk.Dir,
			Source: sk.Origin, Mode: mode, Shadowed: winner != en, Version: sk.Meta.Version, Category: sk.Meta.Category,
			Tags: sk.Meta.Tags, Files: files})
	}
	return rows
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
	case "git", "index":
		return o.Kind + " " + o.RemoteText()
	default:
		s = o.Kind
	}
	if o.Provenance != "" {
		s += " from " + o.Provenance
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// writeListJSON writes {"diagnostics": […], "skills": […]} exactly as
// writeJSON would, but one skill at a time: the output of 50,000 skills is
// never held in memory whole (writeJSON builds all of it, indented, before
// writing a byte).
func writeListJSON(w io.Writer, rows []listedSkill, diags []skill.Diagnostic) error {
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
	if len(rows) == 0 {
		bw.WriteString("[]")
	} else {
		bw.WriteString("[")
		for i := range rows {
			if i > 0 {
				bw.WriteString(",")
			}
			bw.WriteString("\n    ")
			if err := put(&rows[i], "    "); err != nil {
				return err
			}
		}
		bw.WriteString("\n  ]")
	}
	bw.WriteString("\n}\n")
	return bw.Flush()
}
