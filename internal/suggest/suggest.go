// Package suggest finds the known name nearest to a misspelt one, for the
// "did you mean" of error messages (config attributes, flags, workload
// types, trace events): one rule everywhere, HCL's own.
package suggest

import "github.com/agext/levenshtein"

// maxDistance is HCL's threshold for its own suggestions: a candidate
// further than this many edits away is a different name, not a typo.
const maxDistance = 3

// Nearest returns the candidate nearest to given by edit distance, below
// maxDistance, or "" when none is that near. Ties go to the earlier
// candidate, so the answer is deterministic.
func Nearest(given string, candidates []string) string {
	best, bestDist := "", maxDistance
	for _, c := range candidates {
		if d := levenshtein.Distance(given, c, nil); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}
