package webui

import (
	"html/template"
	"net/http"
	"sort"
	"strings"

	"github.com/loadout/loadout/skill"
)

// The Files tab: the manifest as a tree of folders (collapsible <details>)
// and files with their size, type and flags; one editor per text file,
// upload, Add File, rename, delete and the executable bit, all through the
// API (static/files.js). Read-only skills show the tree and the contents.

// fileNode is a folder or a file of the tree.
type fileNode struct {
	Name, Path string
	Dir        bool
	Editable   bool
	Children   []*fileNode
	File       skill.File
}

// fileTree turns a manifest into a tree: folders first, then files, each
// sorted by name.
func fileTree(files []skill.File, editable bool) []*fileNode {
	root := &fileNode{Dir: true}
	dirs := map[string]*fileNode{"": root}
	var dirOf func(p string) *fileNode
	dirOf = func(p string) *fileNode {
		if n, ok := dirs[p]; ok {
			return n
		}
		parent, name := "", p
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			parent, name = p[:i], p[i+1:]
		}
		n := &fileNode{Name: name, Path: p, Dir: true, Editable: editable}
		pn := dirOf(parent)
		pn.Children = append(pn.Children, n)
		dirs[p] = n
		return n
	}
	for _, f := range files {
		dir, name := "", f.Path
		if i := strings.LastIndexByte(f.Path, '/'); i >= 0 {
			dir, name = f.Path[:i], f.Path[i+1:]
		}
		d := dirOf(dir)
		d.Children = append(d.Children, &fileNode{Name: name, Path: f.Path, File: f, Editable: editable})
	}
	var sortAll func(n *fileNode)
	sortAll = func(n *fileNode) {
		sort.Slice(n.Children, func(i, j int) bool {
			a, b := n.Children[i], n.Children[j]
			if a.Dir != b.Dir {
				return a.Dir
			}
			return a.Name < b.Name
		})
		for _, c := range n.Children {
			sortAll(c)
		}
	}
	sortAll(root)
	return root.Children
}

func (u *ui) tabFiles(w http.ResponseWriter, r *http.Request, sp *skillPage) (template.HTML, bool) {
	d, ok := u.editState(w, r, sp)
	if !ok {
		return "", false
	}
	return u.fragOrFail(w, r, "frag_files.html", d)
}
