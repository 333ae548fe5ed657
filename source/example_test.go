package source_test

import (
	"context"
	"fmt"

	"github.com/loadout/loadout/source"
)

func ExampleScanFolder() {
	res := source.ScanFolder(context.Background(), "../examples/skills", source.Options{})
	for _, s := range res.Skills {
		fmt.Printf("%s: %d files\n", s.Name, len(s.Files))
	}
	fmt.Println(len(res.Diagnostics), "diagnostics")
	// Output:
	// code-review: 1 files
	// commit-messages: 0 files
	// deploy: 5 files
	// pdf-forms: 3 files
	// release-checklist: 0 files
	// 0 diagnostics
}
