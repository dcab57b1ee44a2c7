// Package bundlescenario turns a capture bundle (framework/bundle) into a
// tickemu scenario: the host's facts into the machine, clockevent, governor
// and kernel blocks, and the captured command's argv (cyclictest or
// stress-ng) into workload blocks with the same settings, so the model runs
// what the real kernel ran. A flag the model cannot follow is an error
// naming it, never silently dropped; what the model approximates is listed
// in the scenario's notes.
package bundlescenario

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"
)

// Workload is one workload block: its type and attributes, in the order
// they are written.
type Workload struct {
	Type, Name string
	Attrs      []Attr
}

// Attr is one attribute of a workload block.
type Attr struct {
	Name  string
	Value cty.Value
}

// Command is a translated argv: the workload blocks, how long the command
// ran by its own flags (0: until it was stopped, which only the capture's
// wall time says), and notes on what the model approximates.
type Command struct {
	// Tool is the program ("cyclictest", "stress-ng").
	Tool      string
	Workloads []Workload
	// DurationNS is the run's length the flags set (cyclictest -D or -l,
	// stress-ng -t); 0 when they set none.
	DurationNS int64
	// StopsItself is set when the model's workloads end on their own
	// before DurationNS (cyclictest -l without a shorter -D, its threads
	// sharing one interval): a longer run adds idle time only.
	StopsItself bool
	// MainUnmodelled is set when the model runs only the tasks the
	// command starts, not the command's own first task (cyclictest's main
	// thread): a replay of the capture's background keeps that task
	// (Options.Background).
	MainUnmodelled bool
	Notes          []string
}

// FlagError is a flag the translation refuses: unknown to the tool, or not
// modelled.
type FlagError struct {
	Tool, Flag, Why string
}

func (e *FlagError) Error() string {
	return fmt.Sprintf("%s flag %s: %s", e.Tool, e.Flag, e.Why)
}

// Translate reads argv (argv[0] the program, by its base name) for a
// machine of cpus CPUs.
func Translate(argv []string, cpus int) (*Command, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	switch tool := filepath.Base(argv[0]); tool {
	case "cyclictest":
		return cyclictest(argv[1:], cpus)
	case "stress-ng":
		return stressNG(argv[1:], cpus)
	default:
		return nil, fmt.Errorf("command %q: no workload models it (cyclictest and stress-ng are translated)", tool)
	}
}

// opt is one option as getopt_long would hand it over: its name as written
// ("-t", "--threads"), its argument, and whether it had one.
type opt struct {
	name   string
	arg    string
	hasArg bool
}

// argKind is an option's argument: none, required, or optional.
type argKind int

const (
	noArg argKind = iota
	reqArg
	optArg
)

// spec describes a tool's options: the short letters and long names, each
// with its argument kind and the canonical name its handler uses.
type spec struct {
	tool  string
	short map[byte]argKind
	long  map[string]argKind
	// alias maps a short letter to the long name it means (handlers see
	// the long name).
	alias map[byte]string
	// optionalNext says whether an optional argument may be the next argv
	// word (cyclictest's -t 2 and -a 0-1: the program looks at argv[optind]
	// itself when it is numeric).
	optionalNext func(string) bool
}

// parse splits argv into options as getopt_long does (clustered short
// options, "-i1000" and "-i 1000", "--interval=1000" and "--interval 1000",
// optional arguments glued or, where the program allows, the next word).
// A word that is not an option is an error: neither tool takes operands.
func (s *spec) parse(argv []string) ([]opt, error) {
	var out []opt
	for i := 0; i < len(argv); i++ {
		w := argv[i]
		switch {
		case w == "--":
			if i+1 < len(argv) {
				return nil, &FlagError{s.tool, argv[i+1], "an operand: the tool takes options only"}
			}
			return out, nil
		case strings.HasPrefix(w, "--"):
			name, arg, eq := strings.Cut(w[2:], "=")
			kind, ok := s.long[name]
			if !ok {
				return nil, &FlagError{s.tool, "--" + name, "unknown option"}
			}
			o := opt{name: name}
			switch {
			case kind == noArg && eq:
				return nil, &FlagError{s.tool, "--" + name, "takes no argument"}
			case eq:
				o.arg, o.hasArg = arg, true
			case kind == reqArg:
				if i+1 >= len(argv) {
					return nil, &FlagError{s.tool, "--" + name, "needs an argument"}
				}
				i++
				o.arg, o.hasArg = argv[i], true
			case kind == optArg && i+1 < len(argv) && s.optionalNext != nil && s.optionalNext(argv[i+1]):
				i++
				o.arg, o.hasArg = argv[i], true
			}
			out = append(out, o)
		case strings.HasPrefix(w, "-") && len(w) > 1:
			for j := 1; j < len(w); j++ {
				c := w[j]
				kind, ok := s.short[c]
				if !ok {
					return nil, &FlagError{s.tool, "-" + string(c), "unknown option"}
				}
				o := opt{name: s.alias[c]}
				if kind == noArg {
					out = append(out, o)
					continue
				}
				rest := w[j+1:]
				switch {
				case rest != "":
					o.arg, o.hasArg = rest, true
				case kind == reqArg:
					if i+1 >= len(argv) {
						return nil, &FlagError{s.tool, "-" + string(c), "needs an argument"}
					}
					i++
					o.arg, o.hasArg = argv[i], true
				case i+1 < len(argv) && s.optionalNext != nil && s.optionalNext(argv[i+1]):
					i++
					o.arg, o.hasArg = argv[i], true
				}
				out = append(out, o)
				break
			}
		default:
			return nil, &FlagError{s.tool, w, "an operand: the tool takes options only"}
		}
	}
	return out, nil
}

// flagName is how an error names an option: its long form.
func flagName(o opt) string { return "--" + o.name }

// atoi reads a whole number the way the tools' atoi() would not: strictly,
// so that a typo is an error rather than 0.
func atoi(tool string, o opt) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(o.arg), 10, 64)
	if err != nil {
		return 0, &FlagError{tool, flagName(o), fmt.Sprintf("%q is not a whole number", o.arg)}
	}
	return v, nil
}

// cpuList checks a cpulist ("0-1,3") against the machine and returns it
// normalised; the '!' negation of libnuma is refused.
func cpuList(tool string, o opt, cpus int) (string, int, error) {
	s := strings.TrimSpace(o.arg)
	if s == "" || strings.ContainsAny(s, "!+") {
		return "", 0, &FlagError{tool, flagName(o), fmt.Sprintf("cpulist %q: want CPU numbers and ranges (0-1,3)", o.arg)}
	}
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, rng := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if rng {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return "", 0, &FlagError{tool, flagName(o), fmt.Sprintf("cpulist %q: %q is not a CPU or range", o.arg, part)}
		}
		if b >= cpus {
			return "", 0, &FlagError{tool, flagName(o), fmt.Sprintf("cpulist %q names CPU %d; the machine has %d", o.arg, b, cpus)}
		}
		for c := a; c <= b; c++ {
			seen[c] = true
		}
	}
	return s, len(seen), nil
}

// maxRunSeconds bounds a translated run's length (a year): longer ones
// would overflow the simulated clock's ns.
const maxRunSeconds = 366 * 86400

// timeString reads a duration as both tools write it: a number and an
// optional unit, s (the default), m, h, d (and stress-ng's y).
func timeString(tool string, o opt) (int64, error) {
	s := strings.TrimSpace(o.arg)
	mult := int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 's', 'S':
			s = s[:n-1]
		case 'm', 'M':
			mult, s = 60, s[:n-1]
		case 'h', 'H':
			mult, s = 3600, s[:n-1]
		case 'd', 'D':
			mult, s = 86400, s[:n-1]
		case 'y', 'Y':
			if tool == "stress-ng" {
				mult, s = 31556926, s[:n-1]
			}
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, &FlagError{tool, flagName(o), fmt.Sprintf("%q is not a duration (a number of seconds, or with m, h, d)", o.arg)}
	}
	if v > maxRunSeconds/mult {
		return 0, &FlagError{tool, flagName(o), fmt.Sprintf("%q is longer than the model runs (%d days)", o.arg, maxRunSeconds/86400)}
	}
	return v * mult * 1e9, nil
}

func num(v int64) cty.Value    { return cty.NumberIntVal(v) }
func str(s string) cty.Value   { return cty.StringVal(s) }
func us(v int64) cty.Value     { return cty.StringVal(fmt.Sprintf("%dus", v)) }
func boolean(b bool) cty.Value { return cty.BoolVal(b) }
func set(w *Workload, name string, v cty.Value) {
	for i := range w.Attrs {
		if w.Attrs[i].Name == name {
			w.Attrs[i].Value = v
			return
		}
	}
	w.Attrs = append(w.Attrs, Attr{name, v})
}
