// Package jsondepth finds JSON text nested too deeply, in one pass over
// the bytes and before any decoding, so that no deeper text reaches a
// decoder. It is shared by every reader of untrusted or operator JSON
// (portable documents, config files).
package jsondepth

// Over returns the byte offset of the first "[" or "{" nested deeper than
// max in data, or -1. The text need not be valid JSON: strings (with their
// escapes) are skipped, and everything else outside them counts.
func Over(data []byte, max int) int {
	depth, inString := 0, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > max {
				return i
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return -1
}
