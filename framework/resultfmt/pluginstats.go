package resultfmt

import (
	"fmt"
	"io"
	"strconv"

	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/termtext"
)

// The --plugin-stats sections of the text outputs. The counts come first;
// the wall times, which differ from run to run, come last under a heading
// of their own (PluginWallHeading), so that what precedes it is the same
// for the same configuration and seed.

// PluginStatsHeading and PluginWallHeading start the two sections.
const (
	PluginStatsHeading = "== plugin calls (--plugin-stats: the same for the same configuration and seed) =="
	PluginWallHeading  = "== plugin wall time (--plugin-stats: differs from run to run) =="
)

// pluginLabel names a plugin instance in the tables: its kind, role and
// name as the summary's header does, safe for a terminal.
func pluginLabel(kind, role, name string) string {
	s := kind
	if role != "" {
		s += " " + strconv.Quote(role)
	}
	return s + " " + termtext.Safe(name)
}

// writePluginStats writes a table per plugin: per call the calls, the round
// trips and the calls per round trip, with a total line. title, when set,
// follows each plugin's label ("variant fixed_100ms").
func writePluginStats(b io.Writer, title string, ps []experiment.PluginStats) {
	for _, p := range ps {
		fmt.Fprintf(b, "%s (%s)%s:\n", pluginLabel(string(p.Kind), p.Role, p.Name), p.Isolation, title)
		fmt.Fprintf(b, "  %-20s %12s %12s %11s\n", "call", "calls", "round-trips", "calls/trip")
		var calls, trips uint64
		for _, c := range p.Calls {
			writeCallStats(b, termtext.Safe(c.Call), c.Calls, c.RoundTrips)
			calls += c.Calls
			trips += c.RoundTrips
		}
		writeCallStats(b, "total", calls, trips)
	}
}

func writeCallStats(b io.Writer, call string, calls, trips uint64) {
	per := "-"
	if trips > 0 {
		per = strconv.FormatFloat(float64(calls)/float64(trips), 'f', 2, 64)
	}
	fmt.Fprintf(b, "  %-20s %12d %12d %11s\n", call, calls, trips, per)
}

// writePluginWall writes a table per plugin: per call the calls, the wall
// time spent in them and its mean per call, with a total line.
func writePluginWall(b io.Writer, title string, ps []experiment.PluginWall) {
	for _, p := range ps {
		fmt.Fprintf(b, "%s%s:\n", pluginLabel(string(p.Kind), p.Role, p.Name), title)
		fmt.Fprintf(b, "  %-20s %12s %12s %12s\n", "call", "calls", "time", "mean")
		var calls uint64
		var wall int64
		for _, c := range p.Calls {
			fmt.Fprintf(b, "  %-20s %12d %12s %12s\n", termtext.Safe(c.Call), c.Calls, wallText(c.WallNS), wallText(c.MeanNS))
			calls += c.Calls
			wall += c.WallNS
		}
		var mean int64
		if calls > 0 {
			mean = wall / int64(calls)
		}
		fmt.Fprintf(b, "  %-20s %12d %12s %12s\n", "total", calls, wallText(wall), wallText(mean))
	}
}

// wallText prints a wall time in the unit that keeps three or four digits.
func wallText(ns int64) string {
	switch {
	case ns < 1_000:
		return fmt.Sprintf("%d ns", ns)
	case ns < 1_000_000:
		return fmt.Sprintf("%.1f us", float64(ns)/1e3)
	case ns < 1_000_000_000:
		return fmt.Sprintf("%.1f ms", float64(ns)/1e6)
	}
	return fmt.Sprintf("%.2f s", float64(ns)/1e9)
}

// writeRunPluginStats writes a run's two sections, if it has them.
func writeRunPluginStats(b io.Writer, r *experiment.Result) {
	if r.PluginStats == nil {
		return
	}
	io.WriteString(b, "\n"+PluginStatsHeading+"\n")
	writePluginStats(b, "", r.PluginStats)
	io.WriteString(b, "\n"+PluginWallHeading+"\n")
	writePluginWall(b, "", r.PluginWall)
}

// writeComparePluginStats writes a comparison's two sections, a table per
// variant and plugin, if it has them.
func writeComparePluginStats(b io.Writer, c *experiment.Comparison) {
	if c.PluginStats == nil {
		return
	}
	io.WriteString(b, "\n"+PluginStatsHeading+"\n")
	for _, v := range c.PluginStats {
		writePluginStats(b, variantTitle(v.Variant, v.Runs), v.Plugins)
	}
	io.WriteString(b, "\n"+PluginWallHeading+"\n")
	for _, v := range c.PluginWall {
		writePluginWall(b, variantTitle(v.Variant, v.Runs), v.Plugins)
	}
}

// variantTitle follows a plugin's label in a comparison's tables.
func variantTitle(variant string, runs int) string {
	s := fmt.Sprintf(", %d runs", runs)
	if runs == 1 {
		s = ", 1 run"
	}
	if variant != "" {
		s = ", variant " + termtext.Safe(variant) + s
	}
	return s
}
