package service

import (
	"fmt"
	"testing"

	"github.com/loadout/loadout/skill"
)

// A file that is not served maps to a 4xx-class code by its ServeError
// code, through any wrapping, never by its text.
func TestAsErrorServeError(t *testing.T) {
	for code, want := range map[string]string{
		skill.CodeSymlinkEscapes: CodeRefused,
		skill.CodeNotRegular:     CodeRefused,
		skill.CodeTooLarge:       CodeTooLarge,
		skill.CodeFolderChanged:  CodeConflict,
		skill.CodeFileChanged:    CodeConflict,
	} {
		err := fmt.Errorf("export: %w", &skill.ServeError{Code: code, Path: "a/b.md", Msg: "a/b.md is not served"})
		e := AsError(err)
		if e.Code != want || e.Path != "a/b.md" || len(e.Problems) != 1 || e.Problems[0].Code != code {
			t.Errorf("%s: %+v", code, e)
		}
	}
}
