package portable

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/loadout/loadout/skill"
)

func skillMD(name string) string {
	return "---\nname: " + name + "\ndescription: The " + name + " skill.\n---\nDo it.\n"
}

// skillsZip is a zip of n skills, one per top-level folder s0, s1, ...,
// each with extra files beside SKILL.md.
func skillsZip(t *testing.T, n, extra int) []byte {
	var ents []zent
	for i := range n {
		name := fmt.Sprintf("s%d", i)
		ents = append(ents, zent{name: name + "/SKILL.md", data: skillMD(name)})
		for j := range extra {
			ents = append(ents, zent{name: fmt.Sprintf("%s/f%d.txt", name, j), data: "x"})
		}
	}
	return makeZip(t, ents...)
}

func jsonArray(t *testing.T, n int) []byte {
	var docs []string
	for i := range n {
		d, err := ExportJSON(&skill.Bundle{Content: []byte(skillMD(fmt.Sprintf("j%d", i)))}, ExportMeta{})
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(d))
	}
	return []byte("[" + strings.Join(docs, ",") + "]")
}

func readOK(t *testing.T, name string, data []byte, lim ImportLimits, want int) {
	t.Helper()
	ups, err := ReadUpload(name, KindAuto, data, lim)
	if err != nil || len(ups) != want {
		t.Fatalf("%s: %d skills, %v; want %d", name, len(ups), err, want)
	}
	for _, u := range ups {
		if u.Err != nil || u.Bundle == nil {
			t.Errorf("%s: %s refused: %v", name, u.From, u.Err)
		}
	}
}

func readRefused(t *testing.T, name string, data []byte, lim ImportLimits, words string) {
	t.Helper()
	ups, err := ReadUpload(name, KindAuto, data, lim)
	if err == nil || !strings.Contains(err.Error(), words) || !strings.HasPrefix(err.Error(), name+": ") {
		t.Errorf("%s: %d skills, %v; want a refusal naming the file with %q", name, len(ups), err, words)
	}
}

// Each bound of ImportLimits on a whole file: the exact limit read, one
// past it refused, naming the file and the limit.
func TestReadUploadLimits(t *testing.T) {
	// MaxUploadBytes.
	z := skillsZip(t, 1, 0)
	exact := ImportLimits{MaxUploadBytes: int64(len(z))}
	readOK(t, "one.zip", z, exact, 1)
	exact.MaxUploadBytes--
	readRefused(t, "one.zip", z, exact, fmt.Sprintf("the file is %d bytes, over the limit of %d bytes for one uploaded file", len(z), len(z)-1))

	// MaxArchiveEntries: two skills of two entries each.
	z = skillsZip(t, 2, 1)
	readOK(t, "two.zip", z, ImportLimits{MaxArchiveEntries: 4}, 2)
	readRefused(t, "two.zip", z, ImportLimits{MaxArchiveEntries: 3}, "the archive has 4 entries, over the limit of 3 for one archive")

	// MaxSkills, in a zip and in a JSON array.
	z = skillsZip(t, 3, 0)
	readOK(t, "three.zip", z, ImportLimits{MaxSkills: 3}, 3)
	readRefused(t, "three.zip", z, ImportLimits{MaxSkills: 2}, "the file holds 3 skills, over the limit of 2 for one import")
	j := jsonArray(t, 3)
	readOK(t, "three.json", j, ImportLimits{MaxSkills: 3}, 3)
	readRefused(t, "three.json", j, ImportLimits{MaxSkills: 2}, "the file holds 3 skills, over the limit of 2 for one import")

	// Zip.MaxEntries holds for each skill of a zip of several.
	z = skillsZip(t, 2, 2)
	readOK(t, "two.zip", z, ImportLimits{Zip: ZipLimits{MaxEntries: 3}}, 2)
	ups, err := ReadUpload("two.zip", KindAuto, z, ImportLimits{Zip: ZipLimits{MaxEntries: 2}})
	if err != nil || len(ups) != 2 || ups[0].Err == nil || !strings.Contains(ups[0].Err.Error(), "two.zip: the archive has 3 entries, over the limit of 2") || ups[0].From != "two.zip: s0/" {
		t.Errorf("per-skill entries: %v %+v", err, ups)
	}
}

// A refused document of a JSON array names the file and the document.
func TestReadUploadJSONNamesFile(t *testing.T) {
	data := []byte(`[` + string(jsonArray(t, 1)[1:len(jsonArray(t, 1))-1]) + `, {"schemaVersion": 2, "skill": {"content": 7}}]`)
	ups, err := ReadUpload("pack.json", KindAuto, data, ImportLimits{})
	if err != nil || len(ups) != 2 || ups[0].Err != nil || ups[1].Err == nil || !strings.HasPrefix(ups[1].Err.Error(), "pack.json: [1]") || ups[1].From != "pack.json [1]" {
		t.Fatalf("%v %+v", err, ups)
	}
}

// Not JSON, and not a zip: refused as a whole, naming the file.
func TestReadUploadNotJSON(t *testing.T) {
	readRefused(t, "notes.json", []byte("{nope"), ImportLimits{}, "not a portable JSON document, nor an array of them")
	ups, err := ReadUpload("x.zip", KindAuto, []byte("PK\x03\x04 garbage"), ImportLimits{})
	if err != nil || len(ups) != 1 || ups[0].Err == nil || !strings.HasPrefix(ups[0].Err.Error(), "x.zip: not a valid zip archive") {
		t.Errorf("garbage zip: %v %+v", err, ups)
	}
}

// LimitsFor takes the store's sizes, and the upload cap grows with a
// store total whose JSON form (base64) would not fit the default.
func TestLimitsFor(t *testing.T) {
	l := LimitsFor(skill.Limits{})
	if l.Zip.MaxFileSize != skill.DefaultMaxFileSize || l.Zip.MaxTotalSize != skill.DefaultMaxTotalSize || l.Zip.MaxEntries != DefaultMaxEntries ||
		l.MaxUploadBytes != DefaultMaxUploadBytes || l.MaxArchiveEntries != DefaultMaxArchiveEntries || l.MaxSkills != DefaultMaxSkills {
		t.Errorf("defaults: %+v", l)
	}
	l = LimitsFor(skill.Limits{MaxFileSize: 3 << 20, MaxTotalSize: 60 << 20})
	if l.Zip.MaxFileSize != 3<<20 || l.Zip.MaxTotalSize != 60<<20 || l.MaxUploadBytes != 80<<20+1<<20 {
		t.Errorf("raised: %+v", l)
	}
	// A raised per-file size is honoured by ImportZip's own check too.
	big := bytes.Repeat([]byte("ab"), 1<<20) // 2 MiB
	z := makeZip(t, zent{name: "s/SKILL.md", data: skillMD("s")}, zent{name: "s/big.txt", data: string(big), store: true})
	if _, err := ReadUpload("s.zip", KindZip, z, LimitsFor(skill.Limits{MaxFileSize: 2 << 20})); err != nil {
		t.Fatal(err)
	} else if ups, _ := ReadUpload("s.zip", KindZip, z, LimitsFor(skill.Limits{MaxFileSize: 2 << 20})); ups[0].Err != nil {
		t.Errorf("a 2 MiB file under a 2 MiB limit: %v", ups[0].Err)
	}
}

// One skill keeps the file's own name as where it came from: a zip with
// one top-level folder, and a JSON array of one document.
func TestReadUploadOneSkillNamedByFile(t *testing.T) {
	for name, data := range map[string][]byte{"one.zip": skillsZip(t, 1, 1), "one.json": jsonArray(t, 1)} {
		ups, err := ReadUpload(name, KindAuto, data, ImportLimits{})
		if err != nil || len(ups) != 1 || ups[0].Err != nil || ups[0].From != name {
			t.Errorf("%s: %v %+v; want one skill from %q", name, err, ups, name)
		}
	}
}

// A file without an extension is read as JSON unless its bytes are a
// zip's, a byte-order mark before the JSON included; IsJSON (the UI's
// test of a dropped file) knows JSON by its name or its bytes.
func TestReadUploadSniffsJSON(t *testing.T) {
	j := jsonArray(t, 2)
	bom := append([]byte("\xef\xbb\xbf \n"), j...)
	for _, data := range [][]byte{j, bom} {
		readOK(t, "upload", data, ImportLimits{}, 2)
		if !IsJSON("upload", data) {
			t.Errorf("IsJSON(%.20q) = false", data)
		}
	}
	readOK(t, "upload", skillsZip(t, 2, 0), ImportLimits{}, 2)
	readRefused(t, "upload", []byte("{nope"), ImportLimits{}, "not a portable JSON document, nor an array of them")
	for _, data := range []string{"{nope", "", "  ", "[1,"} {
		if IsJSON("upload", []byte(data)) {
			t.Errorf("IsJSON(%q) = true", data)
		}
	}
	if !IsJSON("notes.JSON", []byte("{nope")) {
		t.Error("IsJSON does not go by a .JSON name")
	}
}
