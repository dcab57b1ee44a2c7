package bundlescenario

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// stressNGStressors are the stressors a workload models: the option that
// starts N instances, the workload type, and its own options.
var stressNGStressors = map[string]struct {
	typ  string
	opts map[string]argKind
}{
	"timer":     {"stress_ng_timer", map[string]argKind{"timer-freq": reqArg, "timer-ops": reqArg}},
	"hrtimers":  {"stress_ng_hrtimers", map[string]argKind{"hrtimers-ops": reqArg}},
	"nanosleep": {"stress_ng_nanosleep", map[string]argKind{"nanosleep-threads": reqArg, "nanosleep-method": reqArg, "nanosleep-ops": reqArg}},
	"timermix":  {"timermix", map[string]argKind{"timermix-ops": reqArg}},
	"cpu":       {"stress_ng_cpu", nil},
}

// stressNGGlobal are the global options translated or harmless: output and
// logging (they change what stress-ng prints, not what the kernel sees).
var stressNGGlobal = map[string]argKind{
	"timeout": reqArg, "taskset": reqArg,
	"metrics": noArg, "metrics-brief": noArg, "verbose": noArg, "quiet": noArg, "log-brief": noArg,
	"times": noArg, "tz": noArg, "yaml": reqArg, "log-file": reqArg, "no-rand-seed": noArg, "sn": noArg,
	"keep-name": noArg, "timestamp": noArg, "stdout": noArg, "syslog": noArg, "help": noArg,
}

// stressNGSpec is the options the translation knows; anything else is an
// unknown option (stress-ng has hundreds: a stressor no workload models is
// named as such by the check below, because its -ops and other options are
// not in the table).
func stressNGSpec() *spec {
	s := &spec{tool: "stress-ng", long: map[string]argKind{},
		short: map[byte]argKind{'t': reqArg, 'T': reqArg, 'M': noArg, 'v': noArg, 'q': noArg, 'c': reqArg, 'h': noArg},
		alias: map[byte]string{'t': "timeout", 'T': "timer", 'M': "metrics", 'v': "verbose", 'q': "quiet", 'c': "cpu", 'h': "help"}}
	for k, v := range stressNGGlobal {
		s.long[k] = v
	}
	for name, st := range stressNGStressors {
		s.long[name] = reqArg
		for k, v := range st.opts {
			s.long[k] = v
		}
	}
	return s
}

// unmodelledStressors name a stressor option ("--clock", "--alarm-ops")
// by its stressor: a clearer error than "unknown option" for the
// stressors people run next to these.
var unmodelledStressors = []string{"alarm", "clock", "itimer", "timerfd", "cyclic", "sleep", "signal", "sigq", "mq", "futex", "switch", "yield", "poll", "epoll"}

// stressNG translates stress-ng's options onto the stressors' workloads.
// An instance count of 0 means one per CPU (stress-ng's "0: all online
// CPUs"); -t/--timeout is the run's length; --taskset pins every instance
// round robin to its list (the real ones are only confined to it).
func stressNG(argv []string, cpus int) (*Command, error) {
	const tool = "stress-ng"
	opts, err := stressNGSpec().parse(argv)
	if err != nil {
		if fe, ok := err.(*FlagError); ok {
			name := strings.TrimLeft(fe.Flag, "-")
			for _, s := range unmodelledStressors {
				if name == s || strings.HasPrefix(name, s+"-") {
					return nil, &FlagError{tool, fe.Flag, fmt.Sprintf("the %s stressor has no workload (timer, hrtimers, nanosleep, timermix and cpu do)", s)}
				}
			}
		}
		return nil, err
	}
	cmd := &Command{Tool: tool}
	instances := map[string]int64{}
	var order []string
	stressorOpts := map[string]opt{}
	taskset := ""
	for _, o := range opts {
		switch {
		case o.name == "timeout":
			if cmd.DurationNS, err = timeString(tool, o); err != nil {
				return nil, err
			}
		case o.name == "taskset":
			if taskset, _, err = cpuList(tool, o, cpus); err != nil {
				return nil, err
			}
		case o.name == "help":
			return nil, &FlagError{tool, flagName(o), "prints the help and runs nothing"}
		default:
			if _, ok := stressNGStressors[o.name]; ok {
				n, err := atoi(tool, o)
				if err != nil {
					return nil, err
				}
				if n < 0 {
					return nil, &FlagError{tool, flagName(o), fmt.Sprintf("%d instances", n)}
				}
				if n == 0 {
					n = int64(cpus)
				}
				if _, seen := instances[o.name]; !seen {
					order = append(order, o.name)
				}
				instances[o.name] = n
				continue
			}
			if _, global := stressNGGlobal[o.name]; global {
				continue
			}
			stressorOpts[o.name] = o
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("stress-ng: no stressor the model has (--timer, --hrtimers, --nanosleep, --timermix, --cpu)")
	}
	// A stressor's own option without the stressor does nothing in
	// stress-ng either, but is probably a slip: refuse it.
	used := map[string]bool{}
	for _, name := range order {
		st := stressNGStressors[name]
		w := Workload{Type: st.typ, Name: name}
		set(&w, "instances", num(instances[name]))
		if taskset != "" {
			set(&w, "cpus", str(taskset))
		}
		if (st.typ == "stress_ng_timer" || st.typ == "stress_ng_nanosleep") && cmd.DurationNS > 0 {
			// The instance's alarm(g_opt_timeout), whole seconds.
			set(&w, "alarm", str(strconv.FormatInt(max(cmd.DurationNS/1e9, 1), 10)+"s"))
		}
		keys := make([]string, 0, len(st.opts))
		for k := range st.opts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			o, ok := stressorOpts[k]
			if !ok {
				continue
			}
			used[k] = true
			switch k {
			case "timer-freq":
				f, err := strconv.ParseFloat(o.arg, 64)
				if err != nil || f < 1 || f > 1e9 || math.IsNaN(f) {
					return nil, &FlagError{tool, flagName(o), fmt.Sprintf("%q is not a frequency in 1..1000000000 Hz", o.arg)}
				}
				set(&w, "freq", str(strconv.FormatFloat(f, 'f', -1, 64)+"Hz"))
			case "nanosleep-threads":
				n, err := atoi(tool, o)
				if err != nil {
					return nil, err
				}
				if n < 1 || n > 1024 {
					return nil, &FlagError{tool, flagName(o), fmt.Sprintf("%d threads: 1..1024", n)}
				}
				set(&w, "threads", num(n))
			case "timer-ops", "hrtimers-ops", "nanosleep-ops", "timermix-ops":
				// stress-ng stops each instance after N bogo ops. The timer,
				// hrtimers and nanosleep models do too; timermix runs as long
				// as the real run did (the capture's wall time, unless -t
				// says otherwise), so the rates compare.
				n, err := atoi(tool, o)
				if err != nil || n < 1 {
					return nil, &FlagError{tool, flagName(o), fmt.Sprintf("%q is not a bogo op count", o.arg)}
				}
				if k == "hrtimers-ops" {
					set(&w, "ops", num(n))
					cmd.Notes = append(cmd.Notes, fmt.Sprintf("--%s %s: an instance stops when its first child has done its share of the instance's bogo ops (N / 8), as stress-ng 0.15.06's does; the run lasts the capture's wall time", k, o.arg))
					continue
				}
				if k == "timer-ops" || k == "nanosleep-ops" {
					set(&w, "ops", num(n))
					cmd.Notes = append(cmd.Notes, fmt.Sprintf("--%s %s: each instance stops after its share of the bogo ops, as stress-ng's does; the run lasts the capture's wall time", k, o.arg))
					continue
				}
				cmd.Notes = append(cmd.Notes, fmt.Sprintf("--%s %s: the model runs for the capture's wall time instead of stopping after that many bogo ops; rates compare, totals do not", k, o.arg))
			case "nanosleep-method":
				switch o.arg {
				case "all", "cstate", "random", "ns", "us", "ms":
					set(&w, "method", str(o.arg))
				default:
					return nil, &FlagError{tool, flagName(o), fmt.Sprintf("method %q: all, cstate, random, ns, us or ms", o.arg)}
				}
			}
		}
		cmd.Workloads = append(cmd.Workloads, w)
	}
	var unused []string
	for k := range stressorOpts {
		if !used[k] {
			unused = append(unused, k)
		}
	}
	if len(unused) > 0 {
		sort.Strings(unused)
		return nil, &FlagError{tool, flagName(stressorOpts[unused[0]]), "an option of a stressor the command does not run"}
	}
	if taskset == "" {
		cmd.Notes = append(cmd.Notes, "stress-ng's instances are not pinned; the model places instance i on CPU i")
	}
	if _, ok := instances["nanosleep"]; ok {
		if _, set := stressorOpts["nanosleep-method"]; !set {
			cmd.Notes = append(cmd.Notes, "stress-ng --nanosleep: the method is random, the only one before V0.17.00 (give --nanosleep-method all for later versions' default)")
		}
	}
	// stress-ng's own process forks the stressor instances and waits for
	// them: the model runs the instances.
	cmd.Notes = append(cmd.Notes, "stress-ng's parent process (it forks the instances and waits for them) is not modelled")
	cmd.MainUnmodelled = true
	return cmd, nil
}
