// Package hdrflag holds the HTTP headers of the bench programs: the
// repeated -H 'Name: value' flag of those that send or serve headers
// (loadgen, bareserve), and the bearer token writeload and mcpload send.
package hdrflag

import (
	"fmt"
	"strings"
)

// Flags holds each -H given, as name and value, in order.
type Flags [][2]string

func (h *Flags) String() string { return fmt.Sprint(*h) }

// Set adds one "Name: value".
func (h *Flags) Set(v string) error {
	k, val, ok := strings.Cut(v, ":")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("header %q: give 'Name: value'", v)
	}
	*h = append(*h, [2]string{strings.TrimSpace(k), strings.TrimSpace(val)})
	return nil
}
