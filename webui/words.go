package webui

import (
	"fmt"
	"strconv"
)

// count is n with its noun, singular for 1 ("1 warning", "2 warnings",
// "0 skills"): every counted word the UI shows goes through it, pages
// (the template function "count") and messages alike.
func count[N int | int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(int64(n), 10) + " " + many
}

// countOf is count for templates, whose counts are int or int64.
func countOf(n any, one, many string) (string, error) {
	switch v := n.(type) {
	case int:
		return count(v, one, many), nil
	case int64:
		return count(v, one, many), nil
	}
	return "", fmt.Errorf("count: %T is not a count", n)
}

// noun is the noun alone for n ("of 1 skill", "of 3 skills").
func noun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
