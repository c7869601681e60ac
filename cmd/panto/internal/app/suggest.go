package app

// Suggest is the name of names the word w is most likely a typo of, or
// "": the nearest one at most two edits away (one for a word of up to
// four letters), or the one w starts. Every front end's did-you-mean
// (an unknown /command, --provider) uses it.
func Suggest(w string, names []string) string {
	best, bestD := "", 3
	limit := 2
	if len(w) <= 4 {
		limit = 1
	}
	for _, n := range names {
		d := Distance(w, n)
		if len(w) >= 2 && len(w) < len(n) && n[:len(w)] == w {
			d = min(d, 1)
		}
		if d <= limit && d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// Distance is the edit distance of a and b, by bytes: insertions,
// deletions, substitutions and swaps of two neighbours (hlep is one
// edit from help).
func Distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
