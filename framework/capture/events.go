package capture

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// DefaultEvents is the event set a capture enables, where the kernel has
// them: what replay and calibration read (the timers, the tick, interrupts
// and softirqs, the scheduler's switches and wakeups, idle, POSIX timer
// signals, IPIs, timer migration and the PM QoS CPU latency requests). "a|b" is one event under two names:
// hrtimer_init became hrtimer_setup in 6.15, and a kernel has one of them.
var DefaultEvents = []string{
	"timer/hrtimer_setup|timer/hrtimer_init",
	"timer/hrtimer_start", "timer/hrtimer_cancel", "timer/hrtimer_expire_entry", "timer/hrtimer_expire_exit",
	"timer/timer_init", "timer/timer_start", "timer/timer_cancel", "timer/timer_expire_entry", "timer/timer_expire_exit",
	"timer/tick_stop", "timer/timer_base_idle",
	"irq/irq_handler_entry", "irq/irq_handler_exit",
	"irq/softirq_raise", "irq/softirq_entry", "irq/softirq_exit",
	"irq_vectors/local_timer_entry", "irq_vectors/local_timer_exit",
	"irq_vectors/call_function_entry", "irq_vectors/call_function_exit",
	"irq_vectors/call_function_single_entry", "irq_vectors/call_function_single_exit",
	"irq_vectors/reschedule_entry", "irq_vectors/reschedule_exit",
	"irq_vectors/irq_work_entry", "irq_vectors/irq_work_exit",
	"sched/sched_switch", "sched/sched_waking", "sched/sched_wakeup", "sched/sched_wakeup_new", "sched/sched_migrate_task",
	"sched/sched_process_fork", "sched/sched_process_exit",
	"power/cpu_idle",
	// The CPU latency PM QoS requests (kernel/power/qos.c): cyclictest's
	// /dev/cpu_dma_latency request, which keeps idle polling with the tick
	// retained, is in the trace only through these; replay applies them.
	"power/pm_qos_add_request", "power/pm_qos_update_request", "power/pm_qos_remove_request", "power/pm_qos_update_target",
	"signal/signal_generate", "signal/signal_deliver",
	"ipi/*",
	"timer_migration/*",
	"msr/write_msr",
}

// Filters are the event filters a capture sets on the events it enables
// (any other event's filter is cleared). msr/write_msr keeps the writes of
// IA32_TSC_DEADLINE (MSR 0x6e0) only: each one programs the local APIC
// timer in TSC-deadline mode (lapic_next_deadline(),
// arch/x86/kernel/apic/apic.c), the clockevent write calibration times; the
// other MSR writes (x2APIC EOIs, one per interrupt) would swamp the trace.
var Filters = map[string]string{
	"msr/write_msr": "msr == 0x6e0",
}

// eventItem is one item of an event list: a pattern (or alternatives) to
// add or to remove.
type eventItem struct {
	alts   []string
	remove bool
}

// ParseEvents reads --events: comma-separated items, each "group/name",
// "group/*" (or "group"), a glob over "group/name" ("timer/hrtimer_*"), a
// bare event name ("sched_switch", looked up in every group), or "default".
// A list whose items all start with "+" or "-" changes the default set;
// otherwise it is the whole set. "" is the default set.
func ParseEvents(list string) ([]eventItem, error) {
	var items []string
	for _, it := range strings.Split(list, ",") {
		if it = strings.TrimSpace(it); it != "" {
			items = append(items, it)
		}
	}
	signed := len(items) > 0
	for _, it := range items {
		if it[0] != '+' && it[0] != '-' {
			signed = false
		}
	}
	var out []eventItem
	if len(items) == 0 || signed {
		out = defaultItems()
	}
	for _, it := range items {
		remove := false
		switch it[0] {
		case '+':
			it = it[1:]
		case '-':
			it, remove = it[1:], true
		}
		if it == "default" {
			if remove {
				return nil, fmt.Errorf("--events: -default: remove events by name")
			}
			out = append(out, defaultItems()...)
			continue
		}
		if it == "" || strings.Count(it, "/") > 1 || strings.ContainsAny(it, " \t:|") {
			return nil, fmt.Errorf("--events: %q is not GROUP/NAME, GROUP/*, GROUP, NAME or default", it)
		}
		if _, err := path.Match(it, ""); err != nil {
			return nil, fmt.Errorf("--events: %q: %v", it, err)
		}
		out = append(out, eventItem{alts: []string{it}, remove: remove})
	}
	return out, nil
}

func defaultItems() []eventItem {
	out := make([]eventItem, len(DefaultEvents))
	for i, e := range DefaultEvents {
		out[i] = eventItem{alts: strings.Split(e, "|")}
	}
	return out
}

// Available lists the events under a tracefs events directory as
// "group/name", sorted.
func Available(eventsDir string) ([]string, error) {
	groups, err := os.ReadDir(eventsDir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, g := range groups {
		if !g.IsDir() {
			continue
		}
		evs, err := os.ReadDir(filepath.Join(eventsDir, g.Name()))
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			if e.IsDir() {
				out = append(out, g.Name()+"/"+e.Name())
			}
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no trace events (a kernel built without them?)", eventsDir)
	}
	return out, nil
}

// Resolve applies items, in order, to the events the kernel has: the events
// to enable, in the order first asked for, and the patterns asked for that
// matched nothing.
func Resolve(available []string, items []eventItem) (enable, missing []string) {
	have := map[string]bool{}
	groups := map[string]bool{}
	for _, e := range available {
		have[e] = true
		g, _, _ := strings.Cut(e, "/")
		groups[g] = true
	}
	// match expands one pattern over the available events.
	match := func(p string) []string {
		switch {
		case !strings.Contains(p, "/") && groups[p]:
			p += "/*"
		case !strings.Contains(p, "/"):
			p = "*/" + p
		}
		if !strings.ContainsAny(p, "*?[") {
			if have[p] {
				return []string{p}
			}
			return nil
		}
		var out []string
		for _, e := range available {
			if ok, _ := path.Match(p, e); ok {
				out = append(out, e)
			}
		}
		return out
	}
	on := map[string]bool{}
	var order []string
	missed := map[string]bool{}
	for _, it := range items {
		var got []string
		for _, alt := range it.alts {
			if got = match(alt); len(got) > 0 {
				break
			}
		}
		if it.remove {
			for _, e := range got {
				on[e] = false
			}
			continue
		}
		if len(got) == 0 {
			for _, alt := range it.alts {
				if !missed[alt] {
					missed[alt] = true
					missing = append(missing, alt)
				}
			}
			continue
		}
		for _, e := range got {
			if _, seen := on[e]; !seen {
				order = append(order, e)
			}
			on[e] = true
		}
	}
	for _, e := range order {
		if on[e] {
			enable = append(enable, e)
		}
	}
	// A pattern later removed by name is not missing, and a removal of an
	// event the kernel lacks is not either.
	var keep []string
	for _, m := range missing {
		removed := false
		for _, it := range items {
			if it.remove && len(it.alts) == 1 && it.alts[0] == m {
				removed = true
			}
		}
		if !removed {
			keep = append(keep, m)
		}
	}
	return enable, keep
}

// isNotExist reports whether err says a file is missing.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
