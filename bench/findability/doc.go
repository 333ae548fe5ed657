// Package findability holds the request set for a findability benchmark of
// search_skills: requests.tsv pairs what a user would type to an
// agent with the skill (or skills) that agent should pick, drawn from the
// public collections anthropics/skills, openai/skills and
// github/awesome-copilot. The package has no code; its tests keep the file
// well formed and check that no request copies its skill's description.
// README.md says where the requests come from and how they were chosen.
package findability
