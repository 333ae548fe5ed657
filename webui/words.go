package webui

import (
	"fmt"
	"strconv"
)

// Words the pages share.

func init() {
	// Registered here rather than in webui.go's map, beside the function.
	funcs["plural"] = pluralOf
}

// plural is "1 warning" or "2 warnings": n and the noun that fits it.
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// pluralOf is plural for templates, whose counts are int or int64.
func pluralOf(n any, one, many string) (string, error) {
	switch v := n.(type) {
	case int:
		return plural(int64(v), one, many), nil
	case int64:
		return plural(v, one, many), nil
	}
	return "", fmt.Errorf("plural: %T is not a count", n)
}
