package jsonc

// strip returns a copy of data in which comments, trailing commas and a
// leading UTF-8 BOM are replaced by spaces. Newlines are kept and nothing
// else is touched, so every byte offset (and hence every line and column) in
// the result is the same as in data, and string literals are unchanged.
//
// An unterminated block comment is blanked to the end of the input; its
// start is returned as open (-1 if there is none).
func strip(data []byte) (out []byte, open int) {
	out = make([]byte, len(data))
	copy(out, data)
	open = -1
	i := 0
	if len(out) >= 3 && out[0] == 0xEF && out[1] == 0xBB && out[2] == 0xBF {
		out[0], out[1], out[2] = ' ', ' ', ' '
		i = 3
	}
	comma := -1   // offset of the last comma, while only blanks have followed it
	var last byte // the last byte that is not blank or in a comment
	for i < len(out) {
		c := out[i]
		switch {
		case c == '"':
			comma = -1
			last = '"'
			i++
			for i < len(out) && out[i] != '"' {
				if out[i] == '\\' {
					i++
				}
				i++
			}
			i++ // the closing quote
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for i < len(out) && out[i] != '\n' {
				out[i] = ' '
				i++
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			start := i
			out[i], out[i+1] = ' ', ' '
			i += 2
			for {
				if i >= len(out) {
					open = start
					break
				}
				if out[i] == '*' && i+1 < len(out) && out[i+1] == '/' {
					out[i], out[i+1] = ' ', ' '
					i += 2
					break
				}
				if out[i] != '\n' {
					out[i] = ' '
				}
				i++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == ',':
			// Only a comma after a value can be a trailing one: "[,]"
			// and "[1,,]" stay errors.
			comma = -1
			if last != 0 && last != '[' && last != '{' && last != ',' && last != ':' {
				comma = i
			}
			last = c
			i++
		case c == '}' || c == ']':
			if comma >= 0 {
				out[comma] = ' '
			}
			comma = -1
			last = c
			i++
		default:
			comma = -1
			last = c
			i++
		}
	}
	return out, open
}
