package webui

// WriteSkills lends the internal tests' catalog generator to the external
// ones (the benchmarks), so both measure the same generated skills.
var WriteSkills = writeSkills
