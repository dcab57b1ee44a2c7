// Package stats holds the statistics behind `tickemu compare`.
//
// Per metric and variant a sample is summarised the way benchstat does it
// (golang.org/x/perf/benchmath with AssumeNothing: the median with a
// distribution-free confidence interval, and the Mann-Whitney U test against
// the base variant), so that `benchstat -col /variant` on the bench output
// prints the same numbers as tickemu's own table.
//
// Because every variant runs the same seeds, the samples are paired, and the
// unpaired U test throws that pairing away. [WilcoxonSignedRank] tests the
// per-seed differences instead: exact (with mid-ranks for ties) for fewer
// than [ExactLimit] non-zero differences, normal approximation with tie and
// continuity corrections above, as R's wilcox.test does.
//
// [Summary] also carries the mean and the population standard deviation that
// the LKP robot prints (lkp-tests lib/compare.rb, lib/statistics.rb).
//
// Nothing here keeps state or draws random numbers: the same inputs give the
// same outputs.
package stats
