package governor

import "github.com/tickemu/tickemu/framework/sdk"

// Haltpoll is the haltpoll governor of KVM guests
// (drivers/cpuidle/governors/haltpoll.c, with the cpuidle-haltpoll driver's
// two states: POLL, then "haltpoll", a HLT that exits to the host). It
// polls before halting only while a guest_halt_poll_ns window is open: the
// window (dev->poll_limit_ns) starts at 0, grows when a halt ended within
// guest_halt_poll_ns and shrinks when one lasted longer (adjust_poll_limit()).
// A zero PM QoS latency request keeps the CPU polling with the tick
// retained; a halt keeps the idle loop's default, a stopped tick.
//
// Divergence: the host's poll state ends only when the CPU has work
// (poll_idle()'s time limit, cpuidle_poll_time(), is not modelled), so
// dev->poll_time_limit is never set and a poll is followed by another poll
// while the window is open, where the kernel halts after a poll that ran
// out its window. With guest_halt_poll_ns = 0 (a common guest setting:
// `haltpoll.guest_halt_poll_ns=0` on the kernel command line) the window
// never opens and the two agree.
type Haltpoll struct {
	base
	pollNS, growStart int64
	shrink, grow      int64
	allowShrink       bool
	cpu               []haltpollCPU
}

// haltpollCPU is the cpuidle_device state haltpoll keeps per CPU:
// dev->poll_limit_ns. (dev->last_state_idx decides only between two polls
// here: see the divergence.)
type haltpollCPU struct {
	pollLimit int64
}

// HaltpollFactory declares the haltpoll governor.
var HaltpollFactory = factory("haltpoll",
	"haltpoll governor of KVM guests (drivers/cpuidle/governors/haltpoll.c): poll within an adaptive guest_halt_poll_ns window, else halt with the tick stopped",
	func(b base) sdk.Plugin { return &Haltpoll{base: b} })

var _ sdk.Governor = (*Haltpoll)(nil)

// Schema implements sdk.Plugin: select_cost and the module parameters.
func (g *Haltpoll) Schema() sdk.Schema {
	s := g.base.Schema()
	s.Attributes = append(s.Attributes,
		sdk.Attribute{Name: "guest_halt_poll_ns", Type: sdk.TypeNumber, Default: "200000",
			Doc: "haltpoll.guest_halt_poll_ns: the largest poll window in ns; 0 never polls (a zero PM QoS request still does)"},
		sdk.Attribute{Name: "guest_halt_poll_grow_start", Type: sdk.TypeNumber, Default: "50000",
			Doc: "haltpoll.guest_halt_poll_grow_start: the window in ns a growing one starts from"},
		sdk.Attribute{Name: "guest_halt_poll_grow", Type: sdk.TypeNumber, Default: "2",
			Doc: "haltpoll.guest_halt_poll_grow: the window's growth factor"},
		sdk.Attribute{Name: "guest_halt_poll_shrink", Type: sdk.TypeNumber, Default: "2",
			Doc: "haltpoll.guest_halt_poll_shrink: the window's shrink divisor (0: close it)"},
		sdk.Attribute{Name: "guest_halt_poll_allow_shrink", Type: sdk.TypeBool, Default: "true",
			Doc:         "haltpoll.guest_halt_poll_allow_shrink: shrink the window after a long halt",
			Unversioned: "a module parameter of the haltpoll governor, with the same default since the governor came (5.4); a guest's command line sets it"},
	)
	return s
}

// Configure implements sdk.Plugin.
func (g *Haltpoll) Configure(s sdk.Setup, c sdk.Config) sdk.Diagnostics {
	d := g.configure(s, c)
	r := c.Reader()
	g.pollNS, g.growStart = r.Int("guest_halt_poll_ns"), r.Int("guest_halt_poll_grow_start")
	g.grow, g.shrink = r.Int("guest_halt_poll_grow"), r.Int("guest_halt_poll_shrink")
	g.allowShrink = r.Bool("guest_halt_poll_allow_shrink")
	d = append(d, r.Diagnostics()...)
	for _, v := range []struct {
		name string
		v    int64
	}{{"guest_halt_poll_ns", g.pollNS}, {"guest_halt_poll_grow_start", g.growStart}, {"guest_halt_poll_grow", g.grow}, {"guest_halt_poll_shrink", g.shrink}} {
		if v.v < 0 {
			d = d.Errorf(v.name, "must not be negative")
		}
	}
	g.cpu = make([]haltpollCPU, max(s.CPUs, 0))
	return d
}

// Counters implements sdk.Plugin.
func (g *Haltpoll) Counters() []sdk.Counter { return g.counters() }

// Enable is haltpoll_enable_device(): the window starts closed.
func (g *Haltpoll) Enable(cpu int, states []sdk.CPUIdleState) {
	g.enable(cpu, states)
	g.cpu[cpu] = haltpollCPU{}
}

// Select is haltpoll_select().
func (g *Haltpoll) Select(r sdk.IdleSelect) sdk.IdleChoice {
	st := g.cpuStates(r.CPU)
	c := &g.cpu[r.CPU]
	switch {
	case len(st) < 2 || r.LatencyReq == 0 || st[1].ExitLatency > r.LatencyReq:
		// The exit-latency test is the host's contract (a governor never
		// picks a state slower than PM QoS allows); haltpoll tests only for
		// a zero request, since cpuidle-haltpoll's halt exits in 1 us.
		return g.answer(r.CPU, 0, false)
	case c.pollLimit == 0:
		return g.answer(r.CPU, 1, true)
	}
	// The last state was a poll (that did not run out its window, see the
	// divergence) or a halt: poll, keeping the tick.
	return g.answer(r.CPU, 0, false)
}

// Reflect is haltpoll_reflect() and adjust_poll_limit().
func (g *Haltpoll) Reflect(r sdk.IdleReflect) {
	g.cpuStates(r.CPU)
	c := &g.cpu[r.CPU]
	if r.State == 0 {
		return
	}
	block := r.Residency
	switch {
	case block > c.pollLimit && block <= g.pollNS:
		v := max(c.pollLimit*g.grow, g.growStart)
		c.pollLimit = min(v, g.pollNS)
	case block > g.pollNS && g.allowShrink:
		if g.shrink == 0 {
			c.pollLimit = 0
		} else {
			c.pollLimit /= g.shrink
		}
	}
}
