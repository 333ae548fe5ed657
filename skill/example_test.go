package skill_test

import (
	"fmt"

	"github.com/loadout/loadout/skill"
)

func ExampleParse() {
	text := "---\nname: deploy\ndescription: Deploy with safety checks.\nversion: 1.0\ntags: [ops]\n---\n# Deploy\n"
	doc, diags, ok := skill.Parse([]byte(text), "skills/deploy/SKILL.md", "deploy")
	fmt.Println(ok, doc.Name, doc.Version, doc.Tags, len(diags))
	fmt.Printf("%q\n", doc.Body)
	// Output:
	// true deploy 1.0 [ops] 0
	// "# Deploy\n"
}

func ExampleParse_lenient() {
	// An unquoted ": " breaks YAML; lenient loading quotes it and says so.
	text := "---\nname: notes\ndescription: Use when: the user takes notes\n---\n"
	doc, diags, ok := skill.Parse([]byte(text), "notes/SKILL.md", "notes")
	fmt.Println(ok, doc.Description)
	for _, d := range diags {
		fmt.Println(d)
	}
	// Output:
	// true Use when: the user takes notes
	// warning yaml-quoted-retry: notes/SKILL.md: frontmatter is not valid YAML as written; it loaded after quoting the value of "description": quote values that contain ": "
}

func ExampleCleanPath() {
	for _, p := range []string{"./scripts/run.sh", "../../.ssh/id_rsa", "/etc/passwd"} {
		clean, err := skill.CleanPath(p)
		fmt.Printf("%q %v\n", clean, err)
	}
	// Output:
	// "scripts/run.sh" <nil>
	// "" path "../../.ssh/id_rsa" refused: it contains "..": paths may not leave the skill folder
	// "" path "/etc/passwd" refused: it is absolute: give a path relative to the skill folder
}
