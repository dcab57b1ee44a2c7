package capture

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// kernel618 and kernel510 are the events of the groups the default set
// touches, as 6.18 (x86, hrtimer_setup, timer_base_idle, timer migration
// hierarchy) and 5.10 (hrtimer_init, no timer_migration group, no
// timer_base_idle, no ipi group) have them, plus a few others.
var kernel618 = []string{
	"timer/hrtimer_setup", "timer/hrtimer_start", "timer/hrtimer_cancel", "timer/hrtimer_expire_entry", "timer/hrtimer_expire_exit",
	"timer/timer_init", "timer/timer_start", "timer/timer_cancel", "timer/timer_expire_entry", "timer/timer_expire_exit",
	"timer/tick_stop", "timer/timer_base_idle", "timer/itimer_state",
	"irq/irq_handler_entry", "irq/irq_handler_exit", "irq/softirq_raise", "irq/softirq_entry", "irq/softirq_exit",
	"irq_vectors/local_timer_entry", "irq_vectors/local_timer_exit", "irq_vectors/reschedule_entry", "irq_vectors/reschedule_exit",
	"irq_vectors/call_function_entry", "irq_vectors/call_function_exit", "irq_vectors/call_function_single_entry",
	"irq_vectors/call_function_single_exit", "irq_vectors/irq_work_entry", "irq_vectors/irq_work_exit", "irq_vectors/vector_alloc",
	"sched/sched_switch", "sched/sched_waking", "sched/sched_wakeup", "sched/sched_wakeup_new", "sched/sched_migrate_task", "sched/sched_process_fork", "sched/sched_process_exit",
	"sched/sched_stat_runtime", "power/cpu_idle", "power/cpu_frequency", "signal/signal_generate", "signal/signal_deliver",
	"power/pm_qos_add_request", "power/pm_qos_update_request", "power/pm_qos_remove_request", "power/pm_qos_update_target",
	"ipi/ipi_send_cpu", "ipi/ipi_send_cpumask", "timer_migration/tmigr_cpu_idle", "timer_migration/tmigr_cpu_active",
	"msr/write_msr", "msr/read_msr",
}

var kernel510 = []string{
	"timer/hrtimer_init", "timer/hrtimer_start", "timer/hrtimer_cancel", "timer/hrtimer_expire_entry", "timer/hrtimer_expire_exit",
	"timer/timer_init", "timer/timer_start", "timer/timer_cancel", "timer/timer_expire_entry", "timer/timer_expire_exit",
	"timer/tick_stop", "irq/irq_handler_entry", "irq/irq_handler_exit", "irq/softirq_raise", "irq/softirq_entry", "irq/softirq_exit",
	"sched/sched_switch", "sched/sched_waking", "sched/sched_wakeup", "sched/sched_wakeup_new", "sched/sched_migrate_task", "sched/sched_process_fork", "sched/sched_process_exit",
	"power/cpu_idle", "signal/signal_generate", "signal/signal_deliver",
	"power/pm_qos_add_request", "power/pm_qos_update_request", "power/pm_qos_remove_request", "power/pm_qos_update_target",
}

func TestResolveEvents(t *testing.T) {
	all618 := []string{
		"timer/hrtimer_setup", "timer/hrtimer_start", "timer/hrtimer_cancel", "timer/hrtimer_expire_entry", "timer/hrtimer_expire_exit",
		"timer/timer_init", "timer/timer_start", "timer/timer_cancel", "timer/timer_expire_entry", "timer/timer_expire_exit",
		"timer/tick_stop", "timer/timer_base_idle",
		"irq/irq_handler_entry", "irq/irq_handler_exit", "irq/softirq_raise", "irq/softirq_entry", "irq/softirq_exit",
		"irq_vectors/local_timer_entry", "irq_vectors/local_timer_exit", "irq_vectors/call_function_entry", "irq_vectors/call_function_exit",
		"irq_vectors/call_function_single_entry", "irq_vectors/call_function_single_exit", "irq_vectors/reschedule_entry",
		"irq_vectors/reschedule_exit", "irq_vectors/irq_work_entry", "irq_vectors/irq_work_exit",
		"sched/sched_switch", "sched/sched_waking", "sched/sched_wakeup", "sched/sched_wakeup_new", "sched/sched_migrate_task", "sched/sched_process_fork", "sched/sched_process_exit",
		"power/cpu_idle", "power/pm_qos_add_request", "power/pm_qos_update_request", "power/pm_qos_remove_request", "power/pm_qos_update_target",
		"signal/signal_generate", "signal/signal_deliver",
		"ipi/ipi_send_cpu", "ipi/ipi_send_cpumask", "timer_migration/tmigr_cpu_active", "timer_migration/tmigr_cpu_idle",
		"msr/write_msr",
	}
	tests := []struct {
		name          string
		kernel        []string
		list          string
		enable        []string // nil: do not check
		first         string   // the first event enabled
		missing       []string
		has, hasNot   []string
		wantParseFail string
	}{
		{name: "default on 6.18", kernel: kernel618, enable: all618, missing: nil},
		{name: "default on 5.10", kernel: kernel510, first: "timer/hrtimer_init",
			has:     []string{"timer/hrtimer_init", "timer/tick_stop", "signal/signal_deliver"},
			hasNot:  []string{"timer/hrtimer_setup"},
			missing: []string{"timer/timer_base_idle", "irq_vectors/local_timer_entry", "irq_vectors/local_timer_exit", "irq_vectors/call_function_entry", "irq_vectors/call_function_exit", "irq_vectors/call_function_single_entry", "irq_vectors/call_function_single_exit", "irq_vectors/reschedule_entry", "irq_vectors/reschedule_exit", "irq_vectors/irq_work_entry", "irq_vectors/irq_work_exit", "ipi/*", "timer_migration/*", "msr/write_msr"}},
		{name: "extend and trim", kernel: kernel618, list: "+sched/sched_stat_runtime,-signal,-timer_migration/*",
			has: []string{"sched/sched_stat_runtime", "timer/hrtimer_setup"}, hasNot: []string{"signal/signal_generate", "timer_migration/tmigr_cpu_idle"}},
		{name: "replace", kernel: kernel618, list: "timer,irq/softirq_entry",
			enable: []string{"timer/hrtimer_cancel", "timer/hrtimer_expire_entry", "timer/hrtimer_expire_exit", "timer/hrtimer_setup",
				"timer/hrtimer_start", "timer/itimer_state", "timer/tick_stop", "timer/timer_base_idle", "timer/timer_cancel",
				"timer/timer_expire_entry", "timer/timer_expire_exit", "timer/timer_init", "timer/timer_start", "irq/softirq_entry"}},
		{name: "glob, bare name, default", kernel: kernel618, list: "timer/hrtimer_*,sched_switch,-timer/hrtimer_setup,cpu_frequency",
			enable: []string{"timer/hrtimer_cancel", "timer/hrtimer_expire_entry", "timer/hrtimer_expire_exit", "timer/hrtimer_start",
				"sched/sched_switch", "power/cpu_frequency"}},
		{name: "default plus", kernel: kernel618, list: "default,power/cpu_frequency", first: "timer/hrtimer_setup",
			has: []string{"power/cpu_frequency", "sched/sched_switch"}, missing: nil},
		{name: "asked for and absent", kernel: kernel510, list: "timer/hrtimer_setup,timer/tick_stop,nosuch",
			enable: []string{"timer/tick_stop"}, missing: []string{"timer/hrtimer_setup", "nosuch"}},
		{name: "removing an absent event is not missing", kernel: kernel510, list: "+sched/sched_stat_runtime,-ipi/*,-timer_migration/*",
			missing: []string{"timer/timer_base_idle", "irq_vectors/local_timer_entry", "irq_vectors/local_timer_exit", "irq_vectors/call_function_entry", "irq_vectors/call_function_exit", "irq_vectors/call_function_single_entry", "irq_vectors/call_function_single_exit", "irq_vectors/reschedule_entry", "irq_vectors/reschedule_exit", "irq_vectors/irq_work_entry", "irq_vectors/irq_work_exit", "msr/write_msr", "sched/sched_stat_runtime"}},
		{name: "bad item", list: "timer:hrtimer_start", wantParseFail: "not GROUP/NAME"},
		{name: "bad glob", list: "timer/[", wantParseFail: "syntax error"},
		{name: "too many slashes", list: "a/b/c", wantParseFail: "not GROUP/NAME"},
		{name: "minus default", list: "-default", wantParseFail: "-default"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			items, err := ParseEvents(tc.list)
			if tc.wantParseFail != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantParseFail) {
					t.Fatalf("err = %v, want %q", err, tc.wantParseFail)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			kernel := slices.Sorted(slices.Values(tc.kernel)) // as Available lists them
			enable, missing := Resolve(kernel, items)
			if tc.enable != nil && !reflect.DeepEqual(enable, tc.enable) {
				t.Errorf("enable =\n%q\nwant\n%q", enable, tc.enable)
			}
			if tc.first != "" && (len(enable) == 0 || enable[0] != tc.first) {
				t.Errorf("first enabled %q, want %q", enable, tc.first)
			}
			if !reflect.DeepEqual(missing, tc.missing) {
				t.Errorf("missing =\n%q\nwant\n%q", missing, tc.missing)
			}
			on := map[string]bool{}
			for _, e := range enable {
				if on[e] {
					t.Errorf("%s enabled twice", e)
				}
				on[e] = true
			}
			for _, e := range tc.has {
				if !on[e] {
					t.Errorf("%s not enabled", e)
				}
			}
			for _, e := range tc.hasNot {
				if on[e] {
					t.Errorf("%s enabled", e)
				}
			}
		})
	}
}

func TestAvailable(t *testing.T) {
	dir := t.TempDir()
	for _, e := range []string{"timer/hrtimer_init", "sched/sched_switch", "timer/tick_stop"} {
		if err := os.MkdirAll(filepath.Join(dir, e), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"enable", "header_page", "timer/enable", "timer/filter"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Available(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sched/sched_switch", "timer/hrtimer_init", "timer/tick_stop"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q want %q", got, want)
	}
	if _, err := Available(t.TempDir()); err == nil {
		t.Error("an empty events directory is accepted")
	}
}

func FuzzParseEvents(f *testing.F) {
	for _, s := range []string{"", "+sched/sched_stat_runtime,-signal", "timer,irq/softirq_entry", "timer/hrtimer_*", "default,-ipi/*", "a/b/c", "timer/["} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		items, err := ParseEvents(list)
		if err != nil {
			return
		}
		enable, _ := Resolve(slices.Sorted(slices.Values(kernel618)), items)
		seen := map[string]bool{}
		for _, e := range enable {
			if seen[e] || !slices.Contains(kernel618, e) {
				t.Fatalf("%q: enables %q twice or an event the kernel lacks", list, e)
			}
			seen[e] = true
		}
	})
}
