package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/trace"
	"github.com/tickemu/tickemu/plugins/builtin"
)

var updateDat = flag.Bool("update-dat", false, "rewrite testdata/tracedat/*.golden from trace-cmd report")

// windowTrace runs configs/FILE and returns its trace of [0, to) in format.
func windowTrace(t *testing.T, file string, format trace.Format, to ktime.Time) []byte {
	t.Helper()
	return windowTraceFrom(t, file, format, 0, to)
}

// windowTraceFrom runs configs/FILE and returns its trace of [from, to) in format.
func windowTraceFrom(t *testing.T, file string, format trace.Format, from, to ktime.Time) []byte {
	t.Helper()
	spec, diags := config.Load(filepath.Join("..", "..", "configs", file), config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	// The run ends where the window does: what it would simulate after
	// is not traced (posix-signals' 2 s for a 2 ms window took 5 s, 50 s
	// under the race detector, a run), and what comes before does not
	// depend on it.
	if warm := ktime.Time(spec.Run.Warmup); to > warm && to < warm+ktime.Time(spec.Run.Duration) {
		spec.Run.Duration = int64(to - warm)
	}
	var buf bytes.Buffer
	if _, err := experiment.Run(spec, experiment.Options{Opener: experiment.InProcess(builtin.Factories()), CallTimeout: noDeadline,
		Trace: &buf, TraceFormat: format, TraceFrom: from, TraceTo: to}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// traceCmd finds trace-cmd, which scripts/install-test-deps.sh installs.
func traceCmd(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("trace-cmd")
	if err != nil {
		t.Fatal("trace-cmd is not installed: run scripts/install-test-deps.sh (make test does)")
	}
	return p
}

// report runs trace-cmd report with args on data written to a file.
func report(t *testing.T, data []byte, args ...string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "trace.dat")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	cmd := exec.Command(traceCmd(t), append(append([]string{"report"}, args...), f)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("trace-cmd report %v: %v\n%s", args, err, errb.String())
	}
	// trace-cmd warns on stderr about what it could not decode.
	if s := strings.TrimSpace(errb.String()); s != "" {
		t.Errorf("trace-cmd report %v wrote to stderr:\n%s", args, s)
	}
	return out.String()
}

var (
	textLine = regexp.MustCompile(`^\s*(.*)-(\d+)\s+\[(\d+)\] (\S{5})\s+(\d+\.\d{6}): (.*)$`)
	// trace-cmd report -l -t: COMM-PID CPU FLAGS TIME(ns): EVENT: FIELDS;
	// the time is cut to the microsecond as the text trace prints it.
	datLine  = regexp.MustCompile(`^\s*(.*)-(\d+)\s+(\d+)(\S{5})\s+(\d+\.\d{6})\d{3}: ([a-z_0-9]+):\s+(.*)$`)
	ptrField = regexp.MustCompile(`\b(hrtimer|timer)=(?:0x)?0*([0-9a-f]+)`)
	sysArg   = regexp.MustCompile(`: 0x0*([0-9a-f]+)`)
)

// normText is a text-trace line in the form compared: comm-pid cpu flags
// time: what, with pointers without leading zeros.
func normText(l string) string {
	m := textLine.FindStringSubmatch(l)
	if m == nil {
		return "unparsed: " + l
	}
	comm := m[1]
	if m[2] == "0" {
		comm = "<idle>"
	}
	if len(comm) > 8 { // trace-cmd report -l prints %8.8s
		comm = comm[:8]
	}
	return comm + "-" + m[2] + " " + cpuOf(m[3]) + " " + m[4] + " " + m[5] + ": " + ptrField.ReplaceAllString(m[6], "$1=$2")
}

// normDat is a trace-cmd report -N -l -t line in the same form: syscall
// events, function-tracer and trace_marker lines turned back into the
// syscall, function and print tracers' own text.
func normDat(l string) string {
	m := datLine.FindStringSubmatch(l)
	if m == nil {
		return "unparsed: " + l
	}
	ev, f := m[6], m[7]
	var what string
	switch {
	case strings.HasPrefix(ev, "sys_enter_"):
		what = "sys_" + strings.TrimPrefix(ev, "sys_enter_") + "(" + sysArg.ReplaceAllString(f, ": $1") + ")"
		what = strings.ReplaceAll(what, ": )", ": 0)")
		what = regexp.MustCompile(`: (,|\))`).ReplaceAllString(what, ": 0$1")
	case strings.HasPrefix(ev, "sys_exit_"):
		what = "sys_" + strings.TrimPrefix(ev, "sys_exit_") + " -> " + f
	case ev == "function":
		what = strings.Replace(f, " <-- ", " <-", 1)
	case ev == "print":
		what = f
	default:
		what = ev + ": " + ptrField.ReplaceAllString(f, "$1=$2")
	}
	return m[1] + "-" + m[2] + " " + cpuOf(m[3]) + " " + m[4] + " " + m[5] + ": " + what
}

func cpuOf(s string) string {
	if s = strings.TrimLeft(s, "0"); s == "" {
		return "0"
	}
	return s
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "cpus=") {
			out = append(out, l)
		}
	}
	return out
}

// TestTraceDatReport writes trace.dat for scenarios that between them emit
// every event of the model (timers, hrtimers, ticks, interrupts, softirqs,
// scheduling, signals, itimers, syscalls, function-tracer lines, PM QoS),
// reads it with Debian's trace-cmd and checks that trace-cmd report decodes
// every field of every event to what the text trace prints: same events,
// same tasks, CPUs, flags, times and fields, in the same order. For
// default.hcl the report itself is a golden file (the first events of the
// run, as trace-cmd prints them with its plugins).
func TestTraceDatReport(t *testing.T) {
	for _, c := range []struct {
		file string
		to   ktime.Time
	}{
		{"default.hcl", ktime.Time(20 * ktime.Millisecond)},
		{"posix-signals.hcl", ktime.Time(2 * ktime.Millisecond)},
		{"devices.hcl", ktime.Time(20 * ktime.Millisecond)},
		{"nohz-full.hcl", ktime.Time(30 * ktime.Millisecond)},
	} {
		t.Run(strings.TrimSuffix(c.file, ".hcl"), func(t *testing.T) {
			dat := windowTrace(t, c.file, trace.FormatDat, c.to)
			text := lines(string(windowTrace(t, c.file, trace.FormatText, c.to)))
			got := lines(report(t, dat, "-N", "-l", "-t"))
			if len(got) != len(text) {
				t.Errorf("trace-cmd report has %d events, the text trace %d", len(got), len(text))
			}
			// trace-cmd merges the per-CPU buffers by time stamp, and
			// events of one nanosecond by CPU: compare CPU by CPU.
			gotCPU, textCPU := map[string][]string{}, map[string][]string{}
			for _, l := range got {
				n := normDat(l)
				cpu := strings.Fields(n)[1]
				gotCPU[cpu] = append(gotCPU[cpu], n)
			}
			for _, l := range text {
				n := normText(l)
				cpu := strings.Fields(n)[1]
				textCPU[cpu] = append(textCPU[cpu], n)
			}
			events := map[string]bool{}
			for _, l := range got {
				if m := datLine.FindStringSubmatch(l); m != nil {
					events[m[6]] = true
				}
			}
			bad := 0
			for cpu, ws := range textCPU {
				gs := gotCPU[cpu]
				if len(gs) != len(ws) {
					t.Errorf("CPU %s: trace-cmd report has %d events, the text trace %d", cpu, len(gs), len(ws))
				}
				for i := 0; i < min(len(gs), len(ws)); i++ {
					if gs[i] != ws[i] {
						if bad++; bad <= 10 {
							t.Errorf("CPU %s event %d:\ntrace-cmd: %s\ntext:      %s", cpu, i, gs[i], ws[i])
						}
					}
				}
			}
			if bad > 10 {
				t.Errorf("... %d events differ", bad)
			}
			if len(events) < 5 {
				t.Errorf("only events %v: the window is too small to test much", events)
			}
			if c.file == "default.hcl" {
				checkGolden(t, filepath.Join("testdata", "tracedat", "default.report.golden"), headLines(report(t, dat), 60))
			}
			// Same config and seed: byte-identical trace.dat.
			if again := windowTrace(t, c.file, trace.FormatDat, c.to); !bytes.Equal(again, dat) {
				t.Error("a second run wrote a different trace.dat")
			}
		})
	}
}

func headLines(s string, n int) string {
	ls := strings.SplitAfter(s, "\n")
	if len(ls) > n {
		ls = ls[:n]
	}
	return strings.Join(ls, "")
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *updateDat {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/tickemu -run TestTraceDatReport -update-dat writes it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (rerun with -update-dat if the change is intended):\n%s", path, got)
	}
}
