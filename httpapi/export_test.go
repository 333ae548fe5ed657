package httpapi

// Routes lists the (method, pattern) pairs New registers, for tests.
func Routes() [][2]string {
	out := make([][2]string, len(routes))
	for i, rt := range routes {
		out[i] = [2]string{rt.Method, rt.Pattern}
	}
	return out
}
