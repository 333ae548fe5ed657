package catalog_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/loadout/loadout/catalog"
)

func Example() {
	agents := []catalog.AgentSpec{{
		AgentID: "ops",
		Skills: []catalog.SourceSpec{
			{Root: "../examples/skills", Available: []string{"deploy", "pdf-*"}},
		},
		Format: "progressive",
	}}
	cat, err := catalog.New(context.Background(), agents, catalog.Options{})
	if err != nil {
		panic(err)
	}
	ops, _ := cat.Agent("ops")
	fmt.Println(ops.Names())

	// The prompt section lists ids and descriptions.
	prompt, report, _ := ops.Prompt(catalog.PromptOptions{})
	fmt.Println(strings.Contains(prompt, "<id>deploy</id>"), report.Listed)

	// load_skill returns the <skill_context> envelope.
	res := ops.Load("deploy")
	fmt.Println(res.Status, strings.Contains(res.Text, "scripts/deploy.sh"))

	// Unknown names get the closest ones.
	fmt.Println(ops.Load("deplyo").Suggestions)

	// read_skill_file refuses paths that leave the skill.
	fmt.Println(ops.ReadFile("deploy", "../pdf-forms/SKILL.md", catalog.ReadOptions{}).Status)
	// Output:
	// [deploy pdf-forms]
	// true 2
	// ok true
	// [deploy]
	// refused
}
