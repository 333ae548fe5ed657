package portable_test

import (
	"fmt"
	"time"

	"github.com/loadout/loadout/portable"
	"github.com/loadout/loadout/skill"
)

func ExampleExportJSON() {
	b := &skill.Bundle{
		Content: []byte("---\nname: greet\ndescription: Greets people. Use when asked to say hello.\ntags: [demo]\n---\nRun scripts/hello.sh.\n"),
		Files: []skill.BundleFile{
			{Path: "scripts/hello.sh", Data: []byte("#!/bin/sh\necho hello\n"), Executable: true},
			{Path: "assets/dot.bin", Data: []byte{0, 1, 2, 255}},
		},
	}
	out, err := portable.ExportJSON(b, portable.ExportMeta{
		ExportedAt:   time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC),
		ExportedFrom: "loadout",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(out))
	// Output:
	// {
	//   "schemaVersion": 2,
	//   "skill": {
	//     "name": "greet",
	//     "slug": "greet",
	//     "description": "Greets people. Use when asked to say hello.",
	//     "category": "",
	//     "tags": [
	//       "demo"
	//     ],
	//     "version": "",
	//     "content": "---\nname: greet\ndescription: Greets people. Use when asked to say hello.\ntags: [demo]\n---\nRun scripts/hello.sh.\n",
	//     "files": [
	//       {
	//         "path": "assets/dot.bin",
	//         "content": "AAEC/w==",
	//         "contentType": "application/octet-stream",
	//         "encoding": "base64",
	//         "sha256": "3d1f57c984978ef98a18378c8166c1cb8ede02c03eeb6aee7e2f121dfeee3e56"
	//       },
	//       {
	//         "path": "scripts/hello.sh",
	//         "content": "#!/bin/sh\necho hello\n",
	//         "contentType": "application/x-sh",
	//         "executable": true,
	//         "sha256": "bfdeaeb08cffb6a36438bcd12dda25417e3cdd36f1e7e482a2849d539225288b"
	//       }
	//     ]
	//   },
	//   "metadata": {
	//     "exportedAt": "2026-02-20T12:00:00Z",
	//     "exportedFrom": "loadout",
	//     "digest": "sha256:140a3c6cc246ee3de0221918c87e7abde2bb68f2124d44d2e7f1b1f8d93b3e44"
	//   }
	// }
}

func ExampleImportJSON() {
	doc := `{
	  "schemaVersion": 2,
	  "skill": {
	    "name": "greet", "slug": "greet", "description": "Greets people.",
	    "content": "---\nname: greet\ndescription: Greets people.\n---\nSay hello.\n",
	    "files": [
	      {"path": "scripts/hello.sh", "content": "#!/bin/sh\necho hello\n", "executable": true},
	      {"path": "assets/dot.bin", "content": "AAEC/w==", "encoding": "base64"}
	    ]
	  }
	}`
	b, err := portable.ImportJSON([]byte(doc))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range b.Files {
		fmt.Printf("%s %d bytes executable=%v binary=%v %s\n", f.Path, len(f.Data), f.Executable, f.Binary, f.ContentType)
	}

	// A path that leaves the skill is refused, naming the file.
	_, err = portable.ImportJSON([]byte(`{"schemaVersion":2,"skill":{"content":"---\nname: x\ndescription: y\n---\n",
	  "files":[{"path":"../../.bashrc","content":"evil"}]}}`))
	fmt.Println(err.(*portable.Error).Code, err.(*portable.Error).Entry)
	// Output:
	// assets/dot.bin 4 bytes executable=false binary=true application/octet-stream
	// scripts/hello.sh 21 bytes executable=true binary=false application/x-sh
	// path-dotdot skill.files[0] (../../.bashrc)
}
