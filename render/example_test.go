package render_test

import (
	"fmt"

	"github.com/loadout/loadout/render"
	"github.com/loadout/loadout/skill"
)

func ExamplePrompt() {
	listing := []render.Entry{{
		Name:        "pdf",
		Description: "Extract text and tables from PDF files & fill forms.",
		Location:    "/home/ann/skills/pdf/SKILL.md",
		Dir:         "/home/ann/skills/pdf",
	}}
	out, rep := render.Prompt(listing, nil, render.Options{})
	fmt.Println(out)
	fmt.Println("---")
	fmt.Printf("%s: %d skill(s), %d of %d chars\n", rep.Format, rep.Listed, rep.Chars, rep.Budget)
	// Output:
	//
	//
	// The following skills provide specialized instructions for specific tasks.
	// Use the read tool to load a skill's file when the task matches its description.
	// When a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.
	//
	// <available_skills>
	//   <skill>
	//     <name>pdf</name>
	//     <description>Extract text and tables from PDF files &amp; fill forms.</description>
	//     <location>/home/ann/skills/pdf/SKILL.md</location>
	//   </skill>
	// </available_skills>
	// ---
	// pi: 1 skill(s), 553 of 8000 chars
}

func ExamplePrompt_budget() {
	var listing []render.Entry
	for _, name := range []string{"alpha", "beta", "gamma", "delta"} {
		listing = append(listing, render.Entry{
			Name:        name,
			Description: "A fairly long description of " + name + " that will not fit the budget whole.",
		})
	}
	out, rep := render.Prompt(listing, nil, render.Options{Format: render.FormatProgressive, Budget: 600})
	fmt.Println(out)
	fmt.Println("---")
	fmt.Println("shortened:", rep.Shortened, "names only:", rep.NameOnly, "omitted:", rep.Omitted)
	// Output:
	// ## Agent Skills
	//
	// Skills hold specialized instructions for specific tasks. When a task matches a skill's description, call the `load_skill` tool with the skill's id to get its full instructions, then follow them.
	//
	// <available_skills>
	//   <skill>
	//     <id>alpha</id>
	//     <description>A fairly long description of alpha that will not fit the budget whole.</description>
	//   </skill>
	//   <skill>
	//     <id>beta</id>
	//     <description>A fairly long description of beta that will not fit the budget whole.</description>
	//   </skill>
	// </available_skills>
	//
	// Also available (load by name): delta gamma
	// ---
	// shortened: [] names only: [delta gamma] omitted: []
}

func ExampleEnvelope() {
	out := render.Envelope(render.EnvelopeInput{
		Entry: render.Entry{
			Name: "pdf",
			Dir:  "/home/ann/skills/pdf",
			Body: "# PDF\n\nRun `scripts/extract.py FILE`.\n",
			Origin: &skill.Origin{
				Kind: "plugin", Plugin: "docs-kit", Trust: "trusted",
			},
		},
		Files: []skill.File{
			{Path: "assets/logo.png", Size: 5120, ContentType: "image/png", Binary: true},
			{Path: "scripts/extract.py", Size: 930, ContentType: "text/x-python", Executable: true, Script: true},
		},
	})
	fmt.Println(out)
	// Output:
	// <skill_context name="pdf" root="/home/ann/skills/pdf">
	// <origin kind="plugin" plugin="docs-kit" trust="trusted"/>
	// <instructions>
	// # PDF
	//
	// Run `scripts/extract.py FILE`.
	// </instructions>
	// <paths>
	// Relative paths in these instructions resolve against the skill root /home/ann/skills/pdf, not the working directory: scripts/extract.py is /home/ann/skills/pdf/scripts/extract.py. Use such absolute paths in tool calls. Run scripts with your shell tool by absolute path; read one first only if you need to know how it works.
	// </paths>
	// <scripts count="1">
	//   <file path="scripts/extract.py" size="930" type="text/x-python" executable="true"/>
	// </scripts>
	// <files count="1">
	//   <file path="assets/logo.png" size="5120" type="image/png" binary="true"/>
	// </files>
	// <execution_directive>
	// You have loaded the skill "pdf". Follow its instructions now for the current task. Supporting files are listed, not loaded: read one only when the instructions call for it.
	// </execution_directive>
	// </skill_context>
}
