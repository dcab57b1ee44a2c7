package sidebyside

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// CyclictestThread is one thread's summary as cyclictest prints it, in its
// unit (us, or ns with -N).
type CyclictestThread struct {
	Thread             int
	Cycles             int64
	Min, Avg, Max      int64
	HasCycles          bool
	P99                int64 // from the -h histogram
	HasP99, Overflowed bool  // Overflowed: the p99 is past the histogram
}

// ParseCyclictest reads cyclictest's output: the last "T: N (tid) P: .. I:
// .. C: .. Min: .. Act: .. Avg: .. Max: .." line of each thread
// (print_stat(); the screen refreshes rewrite them, -q prints them once at
// the end), or with -h the histogram and its summary (print_hist(): "#
// Histogram", a line per bucket with a count per thread, "# Total:", "# Min
// Latencies:", "# Avg Latencies:", "# Max Latencies:", "# Histogram
// Overflows:"), which also gives each thread's p99. Threads are returned in
// order.
func ParseCyclictest(out []byte) ([]CyclictestThread, error) {
	byThread := map[int]*CyclictestThread{}
	get := func(i int) *CyclictestThread {
		if byThread[i] == nil {
			byThread[i] = &CyclictestThread{Thread: i}
		}
		return byThread[i]
	}
	var hist [][]int64 // per bucket, per thread
	var overflows []int64
	inHist := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		// The screen mode moves the cursor up with ESC [ N A between
		// refreshes: the last refresh of a line wins.
		line := strings.TrimSpace(stripEscapes(sc.Text()))
		switch {
		case strings.HasPrefix(line, "T:"):
			th, err := parseStatLine(line)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			*get(th.Thread) = th
		case line == "# Histogram":
			inHist = true
		case strings.HasPrefix(line, "# "):
			label, rest, ok := strings.Cut(line[2:], ":")
			if !ok {
				continue
			}
			var dst func(*CyclictestThread, int64)
			switch label {
			case "Min Latencies":
				dst = func(t *CyclictestThread, v int64) { t.Min = v }
			case "Avg Latencies":
				dst = func(t *CyclictestThread, v int64) { t.Avg = v }
			case "Max Latencies":
				dst = func(t *CyclictestThread, v int64) { t.Max = v }
			case "Total":
				dst = func(t *CyclictestThread, v int64) { t.Cycles, t.HasCycles = v, true }
			case "Histogram Overflows":
				dst = func(_ *CyclictestThread, v int64) { overflows = append(overflows, v) }
			default:
				continue
			}
			inHist = false
			for i, f := range strings.Fields(rest) {
				v, err := strconv.ParseInt(f, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("line %d: %s: %q is not a number", n, label, f)
				}
				dst(get(i), v)
			}
		case inHist && line != "":
			f := strings.Fields(line)
			row := make([]int64, 0, len(f)-1)
			for _, x := range f[1:] {
				v, err := strconv.ParseInt(x, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("line %d: histogram bucket %q: %q is not a count", n, f[0], x)
				}
				row = append(row, v)
			}
			hist = append(hist, row)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	// "# Total:" sums the histogram's buckets only: a wakeup past its end
	// is an overflow, and counts as a cycle too.
	for th, n := range overflows {
		if t := byThread[th]; t != nil && t.HasCycles {
			t.Cycles += n
		}
	}
	if len(hist) > 0 {
		// Buckets with a count of 0 in every thread are printed too
		// (print_hist() prints every bucket), so row i is bucket i.
		for th := range byThread {
			t := byThread[th]
			var total int64
			for _, row := range hist {
				if th < len(row) {
					total += row[th]
				}
			}
			if th < len(overflows) {
				total += overflows[th]
			}
			if total == 0 {
				continue
			}
			rank := (total*99 + 99) / 100 // ceil(0.99 total)
			var seen int64
			t.HasP99, t.Overflowed = true, true
			for b, row := range hist {
				if th < len(row) {
					seen += row[th]
				}
				if seen >= rank {
					t.P99, t.Overflowed = int64(b), false
					break
				}
			}
			if t.Overflowed {
				t.P99 = t.Max // past the histogram: the max bounds it
			}
		}
	}
	out2 := make([]CyclictestThread, 0, len(byThread))
	for _, t := range byThread {
		out2 = append(out2, *t)
	}
	sort.Slice(out2, func(i, j int) bool { return out2[i].Thread < out2[j].Thread })
	return out2, nil
}

// parseStatLine reads "T: 0 ( 5116) P: 0 I:1000 C:   1000 Min: 46 Act: 68
// Avg: 91 Max: 3429" (fields may be glued to their labels).
func parseStatLine(line string) (CyclictestThread, error) {
	var t CyclictestThread
	// Put a space after every ':' and around the parentheses, then read
	// label/value pairs.
	r := strings.NewReplacer(":", ": ", "(", " ( ", ")", " ) ")
	f := strings.Fields(r.Replace(line))
	vals := map[string]int64{}
	for i := 0; i+1 < len(f); i++ {
		if !strings.HasSuffix(f[i], ":") {
			continue
		}
		v, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil {
			return t, fmt.Errorf("%s %q is not a number", f[i], f[i+1])
		}
		vals[strings.TrimSuffix(f[i], ":")] = v
	}
	for _, k := range []string{"T", "C", "Min", "Avg", "Max"} {
		if _, ok := vals[k]; !ok {
			return t, fmt.Errorf("%q has no %s field", line, k)
		}
	}
	t.Thread, t.Cycles, t.HasCycles = int(vals["T"]), vals["C"], true
	t.Min, t.Avg, t.Max = vals["Min"], vals["Avg"], vals["Max"]
	return t, nil
}

// stripEscapes drops ANSI escape sequences (ESC [ ... letter).
func stripEscapes(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && !(s[j] >= '@' && s[j] <= '~') {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// StressNGMetric is one stressor's line of stress-ng's metrics table.
type StressNGMetric struct {
	Stressor string
	BogoOps  int64
	// RealSecs is the "real time (secs)" column; Rate the bogo ops/s
	// (real time).
	RealSecs, Rate float64
	// Misc holds the stressor's miscellaneous metrics by name ("nanosec
	// sleep overrun"); nil when it printed none.
	Misc map[string]float64
}

// ParseStressNG reads the metrics lines of stress-ng's output (--metrics or
// --metrics-brief): "stress-ng: metrc: [PID] STRESSOR BOGO-OPS REAL USR
// SYS RATE RATE-USR-SYS ..." (older versions print "info:" instead of
// "metrc:"); a stressor line is a name followed by numbers only. After
// "miscellaneous metrics:" come "STRESSOR VALUE NAME (...)" lines, kept in
// the stressor's Misc.
func ParseStressNG(out []byte) ([]StressNGMetric, error) {
	var res []StressNGMetric
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	misc := false
	for sc.Scan() {
		line := sc.Text()
		_, rest, ok := strings.Cut(line, "stress-ng: ")
		if !ok {
			continue
		}
		level, rest, ok := strings.Cut(rest, ":")
		if !ok || (level != "metrc" && level != "info") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) > 0 && strings.HasPrefix(f[0], "[") {
			f = f[1:]
		}
		if len(f) >= 2 && f[0] == "miscellaneous" && f[1] == "metrics:" {
			misc = true
			continue
		}
		if misc {
			// "STRESSOR VALUE NAME WORDS (geometic mean of N instances)"
			if len(f) < 3 {
				continue
			}
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				continue
			}
			name := strings.Join(f[2:], " ")
			if k := strings.Index(name, " ("); k >= 0 {
				name = name[:k]
			}
			for i := range res {
				if res[i].Stressor == f[0] {
					if res[i].Misc == nil {
						res[i].Misc = map[string]float64{}
					}
					if _, dup := res[i].Misc[name]; !dup {
						res[i].Misc[name] = v
					}
				}
			}
			continue
		}
		if len(f) < 7 {
			continue
		}
		nums := make([]float64, 0, len(f)-1)
		for _, x := range f[1:] {
			v, err := strconv.ParseFloat(x, 64)
			if err != nil {
				nums = nil
				break
			}
			nums = append(nums, v)
		}
		if len(nums) < 6 || seen[f[0]] {
			continue
		}
		seen[f[0]] = true
		res = append(res, StressNGMetric{Stressor: f[0], BogoOps: int64(nums[0]), RealSecs: nums[1], Rate: nums[4]})
	}
	return res, sc.Err()
}
