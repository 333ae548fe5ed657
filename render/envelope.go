package render

import (
	"strconv"
	"strings"

	"github.com/loadout/loadout/skill"
)

// EnvelopeInput is what an activation result is built from.
type EnvelopeInput struct {
	// Entry is the skill; Body must be set (frontmatter already stripped).
	Entry
	// Files is the skill's manifest of supporting files, in the order to
	// list them (the manifest's own order is by path). They are listed,
	// never read.
	Files []skill.File
	// MaxFiles caps how many files are listed: 0 means DefaultMaxFiles, a
	// negative value means no cap. Scripts are listed first.
	MaxFiles int
	// ReadTool is the tool that reads files of stored (virtual) skills;
	// empty means DefaultReadTool.
	ReadTool string
}

// Envelope renders the result of activating a skill: a <skill_context>
// element holding the skill's origin, its instructions, where its relative
// paths point, its supporting files (scripts apart from the rest) and a
// closing directive to follow the instructions. Attribute values are
// escaped; the body is passed through as written, trimmed.
//
//	<skill_context name="NAME" root="DIR">
//	<origin kind="KIND" plugin="P" trust="T" version="V" provenance="WHERE"/>
//	<instructions>
//	BODY
//	</instructions>
//	<paths>
//	…how relative paths resolve…
//	</paths>
//	<scripts count="N" listed="K">
//	  <file path="scripts/x.sh" size="120" type="application/x-sh" executable="true"/>
//	</scripts>
//	<files count="N">
//	  <file path="assets/logo.png" size="5120" type="image/png" binary="true"/>
//	</files>
//	N more files not listed; …
//	<execution_directive>
//	…
//	</execution_directive>
//	</skill_context>
//
// The origin element appears when Origin.Kind is set, the scripts element
// when there are scripts; the files element is always there (count="0" for
// none) so the model knows not to look further. listed="K" appears only when
// the MaxFiles cap hid some files of that list; the line after the lists
// then says how many in all were left out.
func Envelope(in EnvelopeInput) string {
	read := in.ReadTool
	if read == "" {
		read = DefaultReadTool
	}
	limit := in.MaxFiles
	if limit == 0 {
		limit = DefaultMaxFiles
	}

	var scripts, others []skill.File
	for _, f := range in.Files {
		if f.Script {
			scripts = append(scripts, f)
		} else {
			others = append(others, f)
		}
	}
	listScripts, listOthers := len(scripts), len(others)
	if limit >= 0 {
		listScripts = min(listScripts, limit)
		listOthers = min(listOthers, limit-listScripts)
	}
	unlisted := len(scripts) - listScripts + len(others) - listOthers

	var b strings.Builder
	b.Grow(len(in.Body) + 600 + 90*(listScripts+listOthers))
	b.WriteString("<skill_context name=\"")
	writeXML(&b, in.Name)
	b.WriteString("\" root=\"")
	writeXML(&b, in.Dir)
	b.WriteString("\">\n")

	if o := in.Origin; o != nil && o.Kind != "" {
		b.WriteString("<origin kind=\"")
		writeXML(&b, o.Kind)
		b.WriteString("\"")
		attr(&b, "plugin", o.Plugin)
		attr(&b, "trust", o.Trust)
		if o.Remote() {
			// A remote skill: where it came from, at which revision.
			attr(&b, "source", o.Root)
			attr(&b, "ref", o.Ref)
			attr(&b, "revision", o.Revision)
		}
		if o.Version != 0 {
			attr(&b, "version", strconv.Itoa(o.Version))
		}
		attr(&b, "provenance", o.Provenance)
		b.WriteString("/>\n")
	}

	b.WriteString("<instructions>\n")
	if body := strings.TrimSpace(in.Body); body != "" {
		b.WriteString(body)
		b.WriteString("\n")
	}
	b.WriteString("</instructions>\n")

	b.WriteString("<paths>\n")
	if in.Virtual {
		b.WriteString("This skill is stored by the server, not on the file system. Read the files its instructions name with the ")
		b.WriteString(read)
		b.WriteString(" tool, giving the skill name \"")
		b.WriteString(in.Name)
		b.WriteString("\" and the path relative to the skill root")
		if ex := example(scripts, others); ex != "" {
			b.WriteString(" (for example ")
			b.WriteString(ex)
			b.WriteString(")")
		}
		b.WriteString("; never look for them on disk.")
		if len(scripts) > 0 {
			b.WriteString(" Scripts cannot be run in place: read one first if you need to run it.")
		}
	} else {
		b.WriteString("Relative paths in these instructions resolve against the skill root ")
		b.WriteString(in.Dir)
		b.WriteString(", not the working directory")
		if ex := example(scripts, others); ex != "" {
			b.WriteString(": ")
			b.WriteString(ex)
			b.WriteString(" is ")
			b.WriteString(joinPath(in.Dir, ex))
			b.WriteString(". Use such absolute paths in tool calls.")
		} else {
			b.WriteString(". Use absolute paths in tool calls.")
		}
		if len(scripts) > 0 {
			b.WriteString(" Run scripts with your shell tool by absolute path; read one first only if you need to know how it works.")
		}
	}
	b.WriteString("\n</paths>\n")

	if len(scripts) > 0 {
		writeManifest(&b, "scripts", scripts, listScripts)
	}
	writeManifest(&b, "files", others, listOthers)
	if unlisted > 0 {
		b.WriteString(strconv.Itoa(unlisted))
		if unlisted == 1 {
			b.WriteString(" more file not listed; ")
		} else {
			b.WriteString(" more files not listed; ")
		}
		if in.Virtual {
			b.WriteString("read any file the instructions name with the ")
			b.WriteString(read)
			b.WriteString(" tool.\n")
		} else {
			b.WriteString("read any file the instructions name, or list ")
			b.WriteString(in.Dir)
			b.WriteString(" to see them all.\n")
		}
	}

	b.WriteString("<execution_directive>\nYou have loaded the skill \"")
	b.WriteString(in.Name)
	b.WriteString("\". Follow its instructions now for the current task. Supporting files are listed, not loaded: read one only when the instructions call for it.\n</execution_directive>\n</skill_context>")
	return b.String()
}

func attr(b *strings.Builder, name, value string) {
	if value == "" {
		return
	}
	b.WriteString(" ")
	b.WriteString(name)
	b.WriteString("=\"")
	writeXML(b, value)
	b.WriteString("\"")
}

// writeManifest writes one list of files: <tag count="N" listed="K">, the
// listed attribute only when the cap hid some; self-closing when empty.
func writeManifest(b *strings.Builder, tag string, fs []skill.File, listed int) {
	b.WriteString("<")
	b.WriteString(tag)
	b.WriteString(" count=\"")
	b.WriteString(strconv.Itoa(len(fs)))
	b.WriteString("\"")
	if listed < len(fs) {
		b.WriteString(" listed=\"")
		b.WriteString(strconv.Itoa(listed))
		b.WriteString("\"")
	}
	if listed == 0 {
		b.WriteString("/>\n")
		return
	}
	b.WriteString(">\n")
	writeFiles(b, fs[:listed])
	b.WriteString("</")
	b.WriteString(tag)
	b.WriteString(">\n")
}

func writeFiles(b *strings.Builder, fs []skill.File) {
	for _, f := range fs {
		b.WriteString("  <file path=\"")
		writeXML(b, f.Path)
		b.WriteString("\" size=\"")
		b.WriteString(strconv.FormatInt(f.Size, 10))
		b.WriteString("\"")
		attr(b, "type", f.ContentType)
		if f.Binary {
			b.WriteString(" binary=\"true\"")
		}
		if f.Executable {
			b.WriteString(" executable=\"true\"")
		}
		b.WriteString("/>\n")
	}
}

// example picks a relative path to show how paths resolve: the first script,
// else the first file, else none ("": an invented path such as
// scripts/run.sh would send the model looking for a file the skill does
// not have).
func example(scripts, others []skill.File) string {
	switch {
	case len(scripts) > 0:
		return scripts[0].Path
	case len(others) > 0:
		return others[0].Path
	}
	return ""
}

func joinPath(dir, rel string) string {
	if strings.HasSuffix(dir, "/") {
		return dir + rel
	}
	return dir + "/" + rel
}
