package webui

import "strconv"

// count is n with its noun, singular for 1 ("1 warning", "2 warnings",
// "0 skills"): every counted word the UI shows goes through it, pages
// (the template function "count") and messages alike.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// noun is the noun alone for n ("of 1 skill", "of 3 skills").
func noun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
