package trace

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/tickemu/tickemu/internal/suggest"
)

// Known lists the events the model emits (docs/trace.md describes each);
// hrtimer_init and hrtimer_setup are one event under the names of the
// releases before and from 6.15 (ABI.HRSetup).
// Syscall events are a family: sys_enter_NAME and sys_exit_NAME for every
// syscall a workload makes.
var Known = []string{
	"cpu_idle",
	"function",
	"hrtimer_cancel", "hrtimer_expire_entry", "hrtimer_expire_exit", "hrtimer_init", "hrtimer_setup", "hrtimer_start",
	"irq_handler_entry", "irq_handler_exit",
	"itimer_expire", "itimer_state",
	"local_timer_entry", "local_timer_exit",
	"pm_qos_add_request", "pm_qos_update_target",
	"sched_switch", "sched_wakeup",
	"signal_deliver", "signal_generate",
	"softirq_entry", "softirq_exit", "softirq_raise",
	"tick_stop",
	"timer_cancel", "timer_expire_entry", "timer_expire_exit", "timer_start",
}

// syscallFamilies are the prefixes of the syscall events.
var syscallFamilies = []string{"sys_enter_", "sys_exit_"}

// CheckEvents rejects an event filter (the --trace-events list) any of whose
// names or globs matches no event the model emits, listing the known ones:
// a typo must not give an empty trace.
func CheckEvents(events string) error {
	var bad []string
	for _, f := range strings.Split(events, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if _, err := path.Match(f, ""); err != nil {
			return fmt.Errorf("--trace-events %q: bad glob %q: %v", events, f, err)
		}
		if !matchesKnown(f) {
			bad = append(bad, f)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	known := append([]string(nil), Known...)
	sort.Strings(known)
	hint := ""
	for _, b := range bad {
		if s := suggest.Nearest(b, known); s != "" {
			hint += fmt.Sprintf(" (%q: did you mean %q?)", b, s)
		}
	}
	return fmt.Errorf("--trace-events: %s matches no event%s; known events: %s, sys_enter_NAME, sys_exit_NAME",
		quoteList(bad), hint, strings.Join(known, ", "))
}

func matchesKnown(f string) bool {
	for _, k := range Known {
		if m, _ := path.Match(f, k); m {
			return true
		}
	}
	for _, fam := range syscallFamilies {
		// A syscall name, or a glob that can match one: try the pattern on
		// the family prefix followed by what the pattern has after it.
		if strings.HasPrefix(f, fam) && len(f) > len(fam) {
			return true
		}
		if m, _ := path.Match(f, fam+"x"); m {
			return true
		}
	}
	return false
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
