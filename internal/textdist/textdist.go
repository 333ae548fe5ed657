// Package textdist measures how far apart two strings are, for "did you
// mean" suggestions.
package textdist

// Levenshtein is the edit distance between a and b, counted in runes. It
// costs len(a)·len(b) steps: callers that take either string from a
// request bound its length first, or use Within.
func Levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Within reports whether the edit distance between a and b (in runes) is
// at most k, and if so returns it. Only the band of cells within k of the
// diagonal is computed, and the computation stops as soon as every cell of
// a row is over k, so it costs at most (2k+1)·min(len a, len b) steps
// whatever the lengths; cells says how many it took. A length difference
// over k costs nothing.
func Within(a, b []rune, k int) (d int, ok bool, cells int) {
	if k < 0 {
		return 0, false, 0
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > k {
		return k + 1, false, 0
	}
	// A common prefix and suffix change nothing.
	for len(a) > 0 && a[0] == b[0] {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	n, m := len(a), len(b)
	if n == 0 {
		return m, m <= k, 0
	}
	inf := k + 1
	var buf [2 * 130]int
	var prev, cur []int
	if m+1 <= len(buf)/2 {
		prev, cur = buf[:m+1], buf[m+1:2*(m+1)]
	} else {
		prev, cur = make([]int, m+1), make([]int, m+1)
	}
	for j := range prev {
		prev[j] = min(j, inf)
	}
	for i := 1; i <= n; i++ {
		lo, hi := max(1, i-k), min(m, i+k)
		if lo == 1 {
			cur[0] = min(i, inf)
		} else {
			cur[lo-1] = inf
		}
		rowMin := cur[lo-1]
		ai := a[i-1]
		for j := lo; j <= hi; j++ {
			v := prev[j-1]
			if ai != b[j-1] {
				v++
			}
			if w := prev[j] + 1; w < v {
				v = w
			}
			if w := cur[j-1] + 1; w < v {
				v = w
			}
			if v > inf {
				v = inf
			}
			cur[j] = v
			if v < rowMin {
				rowMin = v
			}
		}
		cells += hi - lo + 1
		if hi < m {
			cur[hi+1] = inf // the next row reads it as the cell above
		}
		if rowMin > k {
			return inf, false, cells
		}
		prev, cur = cur, prev
	}
	d = prev[m]
	return d, d <= k, cells
}
