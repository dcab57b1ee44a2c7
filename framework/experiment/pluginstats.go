package experiment

import (
	"slices"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/sdk"
)

// PluginStats is what --plugin-stats counted of one plugin instance's calls
// (Options.PluginStats, contract.Count). It is deterministic: the same
// configuration and seed give the same numbers, and the same calls in and
// out of process (the round trips differ: none linked in).
type PluginStats struct {
	Kind sdk.Kind `json:"kind"`
	Role string   `json:"role,omitempty"`
	Name string   `json:"name"`
	// Isolation is where the plugin ran: "inprocess" or "process".
	Isolation string            `json:"isolation"`
	Calls     []PluginCallStats `json:"calls"`
}

// PluginCallStats counts one call of a plugin.
type PluginCallStats struct {
	Call  string `json:"call"`
	Calls uint64 `json:"calls"`
	// RoundTrips are the transport round trips the calls made: fewer than
	// the calls where the transport answers from a declared model or holds
	// a call to travel with the next (docs/protocol.md, "Batching"); 0 in
	// process.
	RoundTrips uint64 `json:"round_trips"`
}

// PluginWall is the wall time the host spent in one plugin instance's
// calls. It differs from run to run, so it is kept apart from PluginStats
// and from everything else a result holds, which is byte-identical for the
// same configuration and seed.
type PluginWall struct {
	Kind  sdk.Kind         `json:"kind"`
	Role  string           `json:"role,omitempty"`
	Name  string           `json:"name"`
	Calls []PluginCallWall `json:"calls"`
}

// PluginCallWall is the wall time of one call of a plugin.
type PluginCallWall struct {
	Call   string `json:"call"`
	Calls  uint64 `json:"calls"`
	WallNS int64  `json:"wall_ns"`
	// MeanNS is WallNS / Calls.
	MeanNS int64 `json:"mean_ns"`
}

// pluginStats fills r's PluginStats and PluginWall from the plugins'
// meters; nothing when they were not metered.
func (r *Result) pluginStats(plugins []PluginInfo) {
	for _, p := range plugins {
		if p.meter == nil {
			continue
		}
		iso := config.IsolationInProcess
		if p.meter.OutOfProcess() {
			iso = config.IsolationProcess
		}
		st := PluginStats{Kind: p.Kind, Role: p.Role, Name: p.Name, Isolation: iso, Calls: []PluginCallStats{}}
		wall := PluginWall{Kind: p.Kind, Role: p.Role, Name: p.Name, Calls: []PluginCallWall{}}
		for _, c := range p.meter.Calls() {
			st.Calls = append(st.Calls, PluginCallStats{Call: c.Call, Calls: c.Calls, RoundTrips: c.RoundTrips})
			wall.Calls = append(wall.Calls, PluginCallWall{Call: c.Call, Calls: c.Calls, WallNS: int64(c.Wall),
				MeanNS: int64(c.Wall) / int64(c.Calls)})
		}
		r.PluginStats = append(r.PluginStats, st)
		r.PluginWall = append(r.PluginWall, wall)
	}
}

// VariantPluginStats is --plugin-stats over the runs of one variant of a
// comparison: each plugin's calls and round trips summed over the seeds
// and sweep points that ran.
type VariantPluginStats struct {
	Variant string        `json:"variant"`
	Runs    int           `json:"runs"`
	Plugins []PluginStats `json:"plugins"`
}

// VariantPluginWall is the wall time of VariantPluginStats's calls, apart
// for the same reason as PluginWall.
type VariantPluginWall struct {
	Variant string       `json:"variant"`
	Runs    int          `json:"runs"`
	Plugins []PluginWall `json:"plugins"`
}

// pluginStats sums the runs' plugin stats by variant (nothing when the runs
// were not metered). A plugin is its kind, role, name and isolation; plugins
// and calls keep the order of the first run that has them.
func (c *Comparison) pluginStats() {
	type pkey struct {
		kind      sdk.Kind
		role      string
		name, iso string
	}
	for _, v := range c.Variants {
		var st VariantPluginStats
		var wall VariantPluginWall
		index := map[pkey]int{}
		for i := range c.Runs {
			r := c.Runs[i].Result
			if c.Runs[i].Variant != v || c.Runs[i].Err != nil || r == nil || r.PluginStats == nil {
				continue
			}
			st.Runs++
			for j, p := range r.PluginStats {
				k := pkey{p.Kind, p.Role, p.Name, p.Isolation}
				at, ok := index[k]
				if !ok {
					at = len(st.Plugins)
					index[k] = at
					st.Plugins = append(st.Plugins, PluginStats{Kind: p.Kind, Role: p.Role, Name: p.Name, Isolation: p.Isolation, Calls: []PluginCallStats{}})
					wall.Plugins = append(wall.Plugins, PluginWall{Kind: p.Kind, Role: p.Role, Name: p.Name, Calls: []PluginCallWall{}})
				}
				sp, wp := &st.Plugins[at], &wall.Plugins[at]
				for ci, call := range p.Calls {
					n := slices.IndexFunc(sp.Calls, func(x PluginCallStats) bool { return x.Call == call.Call })
					if n < 0 {
						n = len(sp.Calls)
						sp.Calls = append(sp.Calls, PluginCallStats{Call: call.Call})
						wp.Calls = append(wp.Calls, PluginCallWall{Call: call.Call})
					}
					sp.Calls[n].Calls += call.Calls
					sp.Calls[n].RoundTrips += call.RoundTrips
					w := &wp.Calls[n]
					w.Calls += call.Calls
					if j < len(r.PluginWall) && ci < len(r.PluginWall[j].Calls) {
						w.WallNS += r.PluginWall[j].Calls[ci].WallNS
					}
					w.MeanNS = w.WallNS / int64(w.Calls)
				}
			}
		}
		if st.Runs == 0 {
			continue
		}
		st.Variant, wall.Variant, wall.Runs = v, v, st.Runs
		c.PluginStats = append(c.PluginStats, st)
		c.PluginWall = append(c.PluginWall, wall)
	}
}
