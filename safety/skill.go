package safety

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/loadout/loadout/internal/safefile"
	"github.com/loadout/loadout/skill"
)

// FromSkill reads a loaded skill into an Input: SKILL.md and every
// supporting text file, each up to p's scan bound (MaxScanBytes; a file
// longer than that is read in part and reported, as Check does for a
// longer Input). Binary files are listed without their bytes. It reads
// through the skill's own reader, so folder skills stay inside their
// folder (os.Root) and stored skills come from the store.
func FromSkill(sk *skill.Skill, p *Policy) (Input, error) {
	in, _, err := FromSkillBuffer(sk, p, nil)
	return in, err
}

// FromSkillBuffer is FromSkill reading the files into buf, from its
// length on, and returning it grown for the next skill: a checker of many
// skills reuses one buffer instead of allocating every file (at 50,000
// skills, a third of all loadout check allocated). The Input's bytes are
// buf's, valid until buf is written again, and so is any text of the
// diagnostics Check makes of them that was not copied.
func FromSkillBuffer(sk *skill.Skill, p *Policy, buf []byte) (Input, []byte, error) {
	lim := p.orDefault().maxScan()
	in := Input{Name: sk.Name, Description: sk.Description}
	readAt := func(c io.ReaderAt, size int64) ([]byte, error) {
		n := int(min(size, lim+1)) // one byte more: Check then knows it was cut
		if cap(buf)-len(buf) < n {
			// A new array: what was read before stays in the old one.
			buf = make([]byte, 0, max(2*cap(buf), n, 16<<10))
		}
		b := buf[len(buf) : len(buf)+n]
		m, err := c.ReadAt(b, 0)
		if err != nil && err != io.EOF {
			return nil, err
		}
		buf = buf[:len(buf)+m]
		return b[:m:m], nil
	}
	read := func(path string) ([]byte, error) {
		c, err := sk.Open(path)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		return readAt(c, c.Size())
	}
	if !strings.Contains(sk.Dir, "://") && filepath.IsAbs(sk.Dir) {
		// A folder skill: one os.Root for all its files (links may not
		// leave the folder), instead of opening the folder per file.
		if root, err := os.OpenRoot(sk.Dir); err == nil {
			defer root.Close()
			read = func(path string) ([]byte, error) {
				// safefile: a FIFO swapped in after the scan is refused
				// at once, never waited on (a blocked open here held the
				// catalog's safety lock for good).
				f, fi, err := safefile.OpenIn(root, filepath.FromSlash(path))
				if err != nil {
					return nil, err
				}
				defer f.Close()
				return readAt(f, fi.Size())
			}
		}
	}
	content, err := read(sk.Entry)
	if err != nil {
		return in, buf, fmt.Errorf("%s: %w", sk.Entry, err)
	}
	in.Content = content
	for _, f := range sk.Files {
		bf := skill.BundleFile{Path: f.Path, Executable: f.Executable, Binary: f.Binary, ContentType: f.ContentType}
		if !f.Binary {
			if bf.Data, err = read(f.Path); err != nil {
				return in, buf, fmt.Errorf("%s: %w", f.Path, err)
			}
		}
		in.Files = append(in.Files, bf)
	}
	return in, buf, nil
}

// Gate is the write-time check for a store (sqlstore.Store.Gate): Check
// of the skill being written, split into the findings p refuses and the
// rest.
func Gate(p *Policy) func(b *skill.Bundle, doc *skill.Document) (refused, others []skill.Diagnostic) {
	return func(b *skill.Bundle, doc *skill.Document) (refused, others []skill.Diagnostic) {
		in := Input{Content: b.Content, Files: b.Files}
		if doc != nil {
			in.Name, in.Description = doc.Name, doc.Description
		}
		for _, d := range Check(in, p) {
			d.Skill = in.Name
			if p.orDefault().Refuses(d) {
				refused = append(refused, d)
			} else {
				others = append(others, d)
			}
		}
		return refused, others
	}
}
