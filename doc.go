// Package loadout is the Agent Skills server and library. The library is in
// the packages below it:
//
//   - skill: the SKILL.md format, lenient and strict (skills-ref) checks,
//     diagnostics and the one path check;
//   - source: finding skills in folders;
//   - catalog: per-agent loadouts, activation (load_skill, read_skill_file);
//   - render: prompt sections and activation envelopes;
//   - config: loadout.json.
//
// The loadout command is in cmd/loadout.
package loadout
