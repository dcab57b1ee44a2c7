package bundlescenario

import (
	"fmt"
	"strings"
)

// startMargin is the cyclictest workload's default start_jitter: a thread
// starts up to that long after the run.
const startMargin = 1_000_000

// cyclictestSpec is rt-tests cyclictest's options (process_options(),
// src/cyclictest/cyclictest.c, v2.x; -n is 1.x's clock_nanosleep switch,
// the only mode 2.x has).
var cyclictestSpec = &spec{
	tool: "cyclictest",
	short: map[byte]argKind{'a': optArg, 'A': optArg, 'b': reqArg, 'c': reqArg, 'd': reqArg, 'D': reqArg,
		'F': reqArg, 'h': reqArg, 'H': reqArg, 'i': reqArg, 'l': reqArg, 'm': noArg, 'M': noArg, 'n': noArg,
		'N': noArg, 'o': reqArg, 'p': reqArg, 'q': noArg, 'r': noArg, 'R': noArg, 's': noArg, 'S': noArg,
		't': optArg, 'u': noArg, 'v': noArg, 'x': noArg},
	alias: map[byte]string{'a': "affinity", 'A': "aligned", 'b': "breaktrace", 'c': "clock", 'd': "distance",
		'D': "duration", 'F': "fifo", 'h': "histogram", 'H': "histofall", 'i': "interval", 'l': "loops",
		'm': "mlockall", 'M': "refresh_on_max", 'n': "nanosleep", 'N': "nsecs", 'o': "oscope", 'p': "priority",
		'q': "quiet", 'r': "relative", 'R': "resolution", 's': "system", 'S': "smp", 't': "threads",
		'u': "unbuffered", 'v': "verbose", 'x': "posix_timers"},
	long: map[string]argKind{"affinity": optArg, "aligned": optArg, "breaktrace": reqArg, "clock": reqArg,
		"distance": reqArg, "duration": reqArg, "latency": reqArg, "fifo": reqArg, "histogram": reqArg,
		"histofall": reqArg, "histfile": reqArg, "interval": reqArg, "laptop": noArg, "loops": reqArg,
		"mlockall": noArg, "refresh_on_max": noArg, "nanosleep": noArg, "nsecs": noArg, "oscope": reqArg,
		"output": reqArg, "json": reqArg, "priority": reqArg, "quiet": noArg, "priospread": noArg,
		"relative": noArg, "resolution": noArg, "secaligned": optArg, "system": noArg, "smi": noArg,
		"smp": noArg, "spike": reqArg, "spike-nodes": reqArg, "threads": optArg, "tracemark": noArg,
		"unbuffered": noArg, "verbose": noArg, "dbg_cyclictest": noArg, "policy": reqArg, "help": noArg,
		"posix_timers": noArg, "default-system": noArg, "mainaffinity": reqArg, "deepest-idle-state": reqArg},
	// process_options() takes "-t 2" and "-a 0-1" when the next word
	// starts like a number (atoi() != 0, or a leading '0' or '!').
	optionalNext: func(w string) bool { return w != "" && (w[0] >= '0' && w[0] <= '9' || w[0] == '!') },
}

// cyclictest translates cyclictest's flags onto the cyclictest workload.
// What it does with each follows process_options() and main(): -p without
// --policy means SCHED_FIFO, --policy fifo without -p priority threads+1;
// -t without a number one thread per CPU of the -a mask (else every CPU);
// threads are pinned round robin to the -a list or, without one, thread i to
// CPU i (cpu_for_thread_ua()); -h sets distance to 0; -l ends each thread
// after that many wakeups, -D all of them after that long.
func cyclictest(argv []string, cpus int) (*Command, error) {
	opts, err := cyclictestSpec.parse(argv)
	if err != nil {
		return nil, err
	}
	const tool = "cyclictest"
	w := Workload{Type: "cyclictest", Name: "cyclictest"}
	cmd := &Command{Tool: tool}
	var (
		threads       int64 = 1
		allThreads    bool  // -t without a number, or -S
		mask          string
		maskCPUs      int
		interval      int64 = 1000
		distance      int64 = -1
		prio          int64
		policy        = "other"
		loops         int64
		duration      int64
		histogram     int64
		dmaLatency    = true
		latencySet    bool
		latency       int64
		smp, relative bool
	)
	for _, o := range opts {
		switch o.name {
		case "affinity":
			if o.hasArg {
				if mask, maskCPUs, err = cpuList(tool, o, cpus); err != nil {
					return nil, err
				}
			}
		case "threads":
			if o.hasArg {
				if threads, err = atoi(tool, o); err != nil {
					return nil, err
				}
				allThreads = false
			} else {
				allThreads = true
			}
		case "smp":
			smp = true
		case "interval":
			if interval, err = atoi(tool, o); err != nil {
				return nil, err
			}
		case "distance":
			if distance, err = atoi(tool, o); err != nil {
				return nil, err
			}
		case "priority":
			if prio, err = atoi(tool, o); err != nil {
				return nil, err
			}
			if policy != "fifo" && policy != "rr" {
				policy = "fifo"
			}
		case "policy":
			switch p := strings.ToLower(o.arg); {
			case strings.HasPrefix(p, "other"), strings.HasPrefix(p, "normal"):
				policy = "other"
			case strings.HasPrefix(p, "fifo"):
				policy = "fifo"
			default:
				return nil, &FlagError{tool, flagName(o), fmt.Sprintf("policy %q is not modelled (other and fifo are)", o.arg)}
			}
		case "loops":
			if loops, err = atoi(tool, o); err != nil {
				return nil, err
			}
		case "duration":
			if duration, err = timeString(tool, o); err != nil {
				return nil, err
			}
		case "histogram", "histofall":
			if histogram, err = atoi(tool, o); err != nil {
				return nil, err
			}
		case "clock":
			c, err := atoi(tool, o)
			if err != nil {
				return nil, err
			}
			switch c {
			case 0:
				set(&w, "clock", str("monotonic"))
			case 1:
				set(&w, "clock", str("realtime"))
			default:
				return nil, &FlagError{tool, flagName(o), fmt.Sprintf("clock %d: 0 (CLOCK_MONOTONIC) or 1 (CLOCK_REALTIME)", c)}
			}
		case "relative":
			relative = true
		case "nsecs":
			set(&w, "nsecs", boolean(true))
		case "laptop", "default-system":
			dmaLatency = false
		case "latency":
			if latency, err = atoi(tool, o); err != nil {
				return nil, err
			}
			latencySet = true
		case "mlockall", "quiet", "unbuffered", "verbose", "refresh_on_max", "oscope", "fifo", "output", "json",
			"histfile", "nanosleep", "resolution", "spike", "spike-nodes", "dbg_cyclictest", "mainaffinity", "tracemark":
			// Output, memory locking and the main thread: nothing the
			// timers see (-n is 1.x's clock_nanosleep mode, the model's).
		case "help":
			return nil, &FlagError{tool, flagName(o), "prints the help and runs nothing"}
		case "breaktrace":
			return nil, &FlagError{tool, flagName(o), "not translated: give the threshold with tickemu run --break instead"}
		default:
			// aligned, secaligned, system, posix_timers, priospread, smi,
			// deepest-idle-state: other wakeup modes the workload does
			// not model.
			return nil, &FlagError{tool, flagName(o), "not modelled by the cyclictest workload"}
		}
	}
	if smp {
		// -S: -a -t and the same priority on every thread; -a is ignored.
		mask, maskCPUs, allThreads = "", 0, true
	}
	if allThreads {
		threads = int64(cpus)
		if maskCPUs > 0 {
			threads = int64(maskCPUs)
		}
	}
	if threads < 1 {
		return nil, &FlagError{tool, "--threads", fmt.Sprintf("%d threads", threads)}
	}
	if interval <= 0 || interval > 1e9 {
		return nil, &FlagError{tool, "--interval", fmt.Sprintf("interval %d us: 1 us to 1000 s", interval)}
	}
	if distance < -1 || distance > 1e9 {
		return nil, &FlagError{tool, "--distance", fmt.Sprintf("distance %d us: 0 to 1000 s", distance)}
	}
	if loops < 0 || loops > 1e9 {
		return nil, &FlagError{tool, "--loops", fmt.Sprintf("%d loops: 0 to 1000000000", loops)}
	}
	if threads > 4096 {
		return nil, &FlagError{tool, "--threads", fmt.Sprintf("%d threads: at most 4096", threads)}
	}
	if prio < 0 || prio > 99 {
		return nil, &FlagError{tool, "--priority", fmt.Sprintf("priority %d is outside 0..99", prio)}
	}
	if policy == "fifo" && prio == 0 {
		prio = threads + 1 // "defaulting realtime priority to %d"
	}
	if histogram > 1000000 {
		histogram = 1000000 // HIST_MAX
	}
	if distance == -1 {
		distance = 500
	}
	set(&w, "threads", num(threads))
	if mask != "" {
		set(&w, "cpus", str(mask))
	}
	set(&w, "interval", us(interval))
	set(&w, "distance", us(distance))
	set(&w, "priority", num(prio))
	if relative {
		set(&w, "mode", str("relative"))
	}
	if histogram > 0 {
		set(&w, "histogram", num(histogram))
		distance = 0 // for the duration below; the workload applies it itself
	}
	if loops > 0 {
		set(&w, "loops", num(loops))
	}
	set(&w, "dma_latency", boolean(dmaLatency))
	if dmaLatency && latencySet {
		set(&w, "latency", us(max(latency, 0)))
	}
	// Each thread stops after loops wakeups of its own interval, all of
	// them at -D; and cyclictest's main loop ends the run as soon as one
	// thread has (its allstopped count: shutdown, then SIGTERM to the
	// others), so the run lasts as long as the fastest thread, plus its
	// start (the workload's start_jitter, 1 ms, and the first interval)
	// so that its last wakeup is in the run. The slower threads are cut
	// short with it, as the real ones were.
	if loops > 0 {
		fastest := interval * 1000
		if (loops + 1) > (maxRunSeconds*1e9)/fastest {
			return nil, &FlagError{tool, "--loops", fmt.Sprintf("%d loops of %d us run longer than the model runs (%d days)", loops, fastest/1000, maxRunSeconds/86400)}
		}
		cmd.DurationNS = (loops+1)*fastest + startMargin
		// The workload's other threads exit at their next wakeup after
		// the fastest is done, as cyclictest's shutdown ends them.
		cmd.StopsItself = true
	}
	if duration > 0 && (cmd.DurationNS == 0 || duration < cmd.DurationNS) {
		cmd.DurationNS = duration
		cmd.StopsItself = false
	}
	if mask == "" {
		cmd.Notes = append(cmd.Notes, fmt.Sprintf("cyclictest thread i is pinned to CPU i mod %d (cpu_for_thread_ua())", cpus))
	}
	cmd.Notes = append(cmd.Notes, "cyclictest's main thread (a 10 ms usleep() loop printing the statistics) is not modelled")
	cmd.MainUnmodelled = true
	cmd.Workloads = []Workload{w}
	return cmd, nil
}
