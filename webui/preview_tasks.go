package webui

import (
	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// taskBoxRenderer draws a GFM task-list box ("- [x] done") as a disabled
// checkbox that says what it is: GFM's own is an unlabelled input, which
// screen readers announce as "checkbox" with nothing else (axe: critical).
type taskBoxRenderer struct{}

func (taskBoxRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(extast.KindTaskCheckBox, func(w util.BufWriter, _ []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if n.(*extast.TaskCheckBox).IsChecked {
			w.WriteString(`<input type="checkbox" checked disabled aria-label="done"> `)
		} else {
			w.WriteString(`<input type="checkbox" disabled aria-label="to do"> `)
		}
		return ast.WalkContinue, nil
	})
}
