package plugin_test

import (
	"fmt"

	"github.com/loadout/loadout/plugin"
)

func ExampleLoad() {
	p, diags := plugin.Load("../examples/plugins/acme-ops")
	fmt.Printf("%s %s (%s), %d diagnostics\n", p.Manifest.ID, p.Manifest.Version, p.Manifest.Trust, len(diags))
	for _, s := range p.Skills {
		fmt.Printf("%s virtual=%v enabled=%v files=%d tags=%v origin=%s/%s\n",
			s.Key, s.Virtual, s.DefaultEnabled, len(s.Files), s.Meta.Tags, s.Origin.Kind, s.Origin.Plugin)
		for _, f := range s.Files {
			fmt.Printf("  %s script=%v\n", f.Path, f.Script)
		}
	}
	// Output:
	// acme-ops 1.4.0 (self_host_guarded), 0 diagnostics
	// plugin:acme-ops/rollout virtual=false enabled=true files=2 tags=[ops deployment] origin=plugin/acme-ops
	//   references/regions.md script=false
	//   scripts/canary.sh script=true
	// plugin:acme-ops/oncall-handoff virtual=true enabled=false files=1 tags=[oncall] origin=plugin/acme-ops
	//   templates/handoff.md script=false
}
