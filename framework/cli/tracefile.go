package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/internal/outfile"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/trace"
)

// traceFlags are run's trace options.
type traceFlags struct {
	file, events, format, window string
	warn                         string
	breakUS                      int64
	lookback                     string
}

// defaultTraceWarn is the size past which run warns that a trace will be
// large (the README's unfiltered example wrote 1.1 GB).
const defaultTraceWarn = "256MB"

func (t *traceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.file, "trace", "", "write a trace to FILE (- for stdout; the summary then goes to stderr)")
	fs.StringVar(&t.events, "trace-events", "", "comma-separated events or globs to trace (default all; unknown names are an error)")
	fs.StringVar(&t.format, "trace-format", "", "trace format: text (ftrace), dat (trace-cmd's trace.dat for trace-cmd report and KernelShark) perfetto (Chrome JSON trace events for ui.perfetto.dev) or pftrace (Perfetto's native protobuf: ftrace events, timer flows, counters); default by the file's extension: .dat, .json, .pftrace or .perfetto-trace, else text")
	fs.StringVar(&t.window, "trace-window", "", "trace only simulated time FROM..TO (e.g. 300s..300.2s; either side may be empty)")
	fs.StringVar(&t.warn, "trace-warn", defaultTraceWarn, "warn early when the trace is on course to exceed SIZE (e.g. 256MB; 0 = never)")
	fs.Int64Var(&t.breakUS, "breaktrace", 0, "stop at the first cyclictest wakeup slower than US microseconds (cyclictest -b); with --trace, the trace holds the --breaktrace-lookback before it")
	fs.StringVar(&t.lookback, "breaktrace-lookback", "10ms", "with --breaktrace and --trace: how much simulated time of trace before the break to keep")
}

// options checks the trace flags and fills the run options; it returns a
// usage error for bad flags.
func (t *traceFlags) options(eo *experiment.Options, log zerolog.Logger) error {
	if t.breakUS < 0 {
		return fmt.Errorf("--breaktrace %d: want a latency in microseconds above 0", t.breakUS)
	}
	eo.BreakNS = t.breakUS * 1000
	if t.file == "" {
		if t.events != "" || t.window != "" || t.format != "" {
			return fmt.Errorf("--trace-events, --trace-window and --trace-format need --trace FILE")
		}
		return nil
	}
	switch f := trace.Format(t.format); f {
	case "":
		eo.TraceFormat = trace.FormatFor(t.file)
	case trace.FormatText, trace.FormatPerfetto, trace.FormatDat, trace.FormatPftrace:
		eo.TraceFormat = f
	default:
		return fmt.Errorf("--trace-format %q: want text, dat, perfetto or pftrace", t.format)
	}
	if err := trace.CheckEvents(t.events); err != nil {
		return err
	}
	eo.TraceEvents = t.events
	if t.window != "" {
		from, to, err := parseWindow(t.window)
		if err != nil {
			return err
		}
		eo.TraceFrom, eo.TraceTo = from, to
	}
	warn, err := parseSize(t.warn)
	if err != nil {
		return fmt.Errorf("--trace-warn %q: %v", t.warn, err)
	}
	eo.TraceWarnBytes = warn
	if t.breakUS > 0 {
		if t.window != "" {
			return fmt.Errorf("--breaktrace keeps the trace before the break; it does not take --trace-window")
		}
		lb, err := ktime.ParseDuration(t.lookback)
		if err != nil || lb <= 0 {
			return fmt.Errorf("--breaktrace-lookback %q: want a positive duration such as 10ms", t.lookback)
		}
		eo.TraceRing = ktime.Time(lb)
		eo.TraceWarnBytes = 0 // only the lookback is written
	}
	eo.OnTraceEstimate = func(est int64, at ktime.Time) {
		log.Warn().Int64("estimate_bytes", est).Str("estimate", sizeString(est)).Str("at", at.String()).
			Msgf("trace: on course for about %s; narrow it with --trace-window FROM..TO or --trace-events (--trace-warn 0 silences this)", sizeString(est))
	}
	return nil
}

// parseWindow parses FROM..TO (durations of simulated time; either may be empty).
func parseWindow(s string) (from, to ktime.Time, err error) {
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		return 0, 0, fmt.Errorf("--trace-window %q: want FROM..TO, e.g. 300s..300.2s", s)
	}
	if a = strings.TrimSpace(a); a != "" {
		v, err := ktime.ParseDuration(a)
		if err != nil {
			return 0, 0, fmt.Errorf("--trace-window %q: FROM: %v", s, err)
		}
		from = ktime.Time(v)
	}
	if b = strings.TrimSpace(b); b != "" {
		v, err := ktime.ParseDuration(b)
		if err != nil {
			return 0, 0, fmt.Errorf("--trace-window %q: TO: %v", s, err)
		}
		to = ktime.Time(v)
		if to <= from {
			return 0, 0, fmt.Errorf("--trace-window %q: TO must be after FROM", s)
		}
	}
	return from, to, nil
}

// parseSize parses a byte size: 0, 512KB, 256MB, 2GB (powers of 1024).
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(s, u.suf) {
			s, mult = strings.TrimSuffix(s, u.suf), u.m
			break
		}
	}
	var n int64
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil || n < 0 || fmt.Sprint(n) != s {
		return 0, fmt.Errorf("want a size such as 256MB or 0")
	}
	return n * mult, nil
}

func sizeString(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KB", n>>10)
}

// traceOutput is where a run's trace goes: Commit when the run ended
// (complete, stopped at max_wall or interrupted), Discard when it failed.
type traceOutput interface {
	io.Writer
	Commit() error
	Discard()
}

// openTrace opens the trace output. A file is written beside its path and
// renamed into place by Commit (outfile), so a failed run or a full disk
// leaves the previous trace intact and two runs writing one path never mix
// their bytes; a FIFO or device is opened write-only in place (a reader that
// goes away then makes writes fail). "-" is standard output, duplicated so
// that a closed pipe is a write error (EPIPE) and not a SIGPIPE.
func openTrace(name string) (traceOutput, error) {
	if name == "-" {
		fd, err := syscall.Dup(int(os.Stdout.Fd()))
		if err != nil {
			return nil, fmt.Errorf("--trace -: %v", err)
		}
		return stdoutTrace{os.NewFile(uintptr(fd), "stdout")}, nil
	}
	return outfile.Create(name)
}

// stdoutTrace is the trace on standard output: there is nothing to rename.
type stdoutTrace struct{ *os.File }

func (s stdoutTrace) Commit() error { return s.Close() }
func (s stdoutTrace) Discard()      { s.Close() }
