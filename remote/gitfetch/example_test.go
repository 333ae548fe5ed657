package gitfetch_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/loadout/loadout/remote"
	"github.com/loadout/loadout/remote/gitfetch"
)

// Resolve the branch's commit (the pin), then write the skills folder at
// that commit into a new snapshot folder.
func Example() {
	f, err := gitfetch.New(remote.Spec{
		ID:    "skills",
		Git:   "https://github.com/anthropics/skills.git",
		Ref:   "main",
		Paths: []string{"skills"},
		Token: os.Getenv("SKILLS_TOKEN"), // optional; sent as basic auth, never logged
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	rev, err := f.Resolve(ctx) // lists refs only
	if err != nil {
		log.Fatal(remote.CodeOf(err), err)
	}
	notes, err := f.Fetch(ctx, rev, "/var/cache/loadout/skills-"+rev, remote.DefaultLimits)
	if err != nil {
		log.Fatal(remote.CodeOf(err), err) // the caller removes the partial folder
	}
	for _, n := range notes {
		fmt.Println("note:", n) // a submodule or a symlink skipped
	}
}
