package trace_test

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/internal/simtest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current model")

// runConfig runs configs/NAME.hcl with vars and the variant, returning the trace.
func runConfig(t *testing.T, name, variant string, vars map[string]string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "configs", name+".hcl"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	simtest.Run(t, string(src), config.Options{Variant: variant, Vars: vars}, &buf)
	return buf.Bytes()
}

// TestGolden compares short traces of the POSIX signal scenario with the
// files in testdata: the first 130 us of configs/posix-signals.hcl (the instance's usleep(0) takes the first ~50 us), in which
// both eras reach their steady cycle (see the comments in the files' names).
// Regenerate with go test ./framework/trace -run TestGolden -update and
// review the diff: it is the model's behaviour, event by event.
func TestGolden(t *testing.T) {
	for _, variant := range []string{"legacy", "consistent"} {
		t.Run(variant, func(t *testing.T) {
			got := runConfig(t, "posix-signals", variant, map[string]string{"duration": "130us"})
			path := filepath.Join("testdata", "posix-signals-"+variant+".golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("trace differs from %s (run with -update and review the diff):\n%s", path, firstDiff(got, want))
			}
		})
	}
}

// firstDiff shows the first differing line.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + gl + "\nwant: " + wl
		}
	}
	return "(same lines)"
}

// lineRE is a trace line as tracefs `trace` prints it: comm right-aligned in
// 16 columns, "-pid" left-aligned in 7, the CPU in 3 digits, five flag
// characters, seconds with exactly six decimals, then the function column.
var lineRE = regexp.MustCompile(`^([ ]*[^ ].{0,15}|.{16})-(\d+) *\[(\d{3})\] ([dD.][Nnp.][hHsz.][0-9a-f.][0-9.]) +(\d+)\.(\d{6}): (.+)$`)

// fieldRE holds the field layout of each event the model emits, after the
// kernel's TP_printk() formats (include/trace/events/timer.h, irq.h,
// irq_vectors.h, sched.h, signal.h) and print_syscall_enter/exit().
var fieldRE = map[string]*regexp.Regexp{
	"hrtimer_init":  regexp.MustCompile(`^hrtimer=[0-9a-f]{16} clockid=CLOCK_[A-Z]+ mode=[A-Z|]+$`),
	"hrtimer_setup": regexp.MustCompile(`^hrtimer=[0-9a-f]{16} clockid=CLOCK_[A-Z]+ mode=[A-Z|]+$`),
	// was_armed= from 7.1 (trace.ABI.WasArmed)
	"hrtimer_start":        regexp.MustCompile(`^hrtimer=[0-9a-f]{16} function=\w+ expires=\d+ softexpires=\d+ mode=[A-Z|]+( was_armed=[01])?$`),
	"hrtimer_cancel":       regexp.MustCompile(`^hrtimer=[0-9a-f]{16}$`),
	"hrtimer_expire_entry": regexp.MustCompile(`^hrtimer=[0-9a-f]{16} function=\w+ now=\d+$`),
	"hrtimer_expire_exit":  regexp.MustCompile(`^hrtimer=[0-9a-f]{16}$`),
	"timer_start":          regexp.MustCompile(`^timer=[0-9a-f]{16} function=\w+ expires=\d+ \[timeout=-?\d+\] bucket_expiry=\d+ cpu=\d+ idx=\d+ flags=[MDPI|]*$`),
	"timer_expire_entry":   regexp.MustCompile(`^timer=[0-9a-f]{16} function=\w+ now=\d+ baseclk=\d+$`),
	"timer_expire_exit":    regexp.MustCompile(`^timer=[0-9a-f]{16}$`),
	"timer_cancel":         regexp.MustCompile(`^timer=[0-9a-f]{16}$`),
	"tick_stop":            regexp.MustCompile(`^success=[01] dependency=[A-Z_]+$`),
	"local_timer_entry":    regexp.MustCompile(`^vector=\d+$`),
	"local_timer_exit":     regexp.MustCompile(`^vector=\d+$`),
	"irq_handler_entry":    regexp.MustCompile(`^irq=\d+ name=\S+$`),
	"irq_handler_exit":     regexp.MustCompile(`^irq=\d+ ret=(handled|unhandled)$`),
	"softirq_raise":        regexp.MustCompile(`^vec=\d+ \[action=[A-Z_]+\]$`),
	"softirq_entry":        regexp.MustCompile(`^vec=\d+ \[action=[A-Z_]+\]$`),
	"softirq_exit":         regexp.MustCompile(`^vec=\d+ \[action=[A-Z_]+\]$`),
	"sched_wakeup":         regexp.MustCompile(`^comm=\S+ pid=\d+ prio=\d+ target_cpu=\d{3}$`),
	"sched_switch":         regexp.MustCompile(`^prev_comm=\S+ prev_pid=\d+ prev_prio=\d+ prev_state=[RSDX+]+ ==> next_comm=\S+ next_pid=\d+ next_prio=\d+$`),
	"signal_generate":      regexp.MustCompile(`^sig=\d+ errno=\d+ code=-?\d+ comm=\S+ pid=\d+ grp=[01] res=[0-4]$`),
	"signal_deliver":       regexp.MustCompile(`^sig=\d+ errno=\d+ code=-?\d+ sa_handler=[0-9a-f]+ sa_flags=[0-9a-f]+$`),
	"itimer_state":         regexp.MustCompile(`^which=\d expires=\d+ it_value=\d+\.\d{6} it_interval=\d+\.\d{6}$`),
	"itimer_expire":        regexp.MustCompile(`^which=\d pid=\d+ now=\d+$`),
}

var (
	eventRE    = regexp.MustCompile(`^([a-z_0-9]+): (.*)$`)
	sysEnterRE = regexp.MustCompile(`^sys_[a-z_0-9]+\(((\w+: [0-9a-f]+)(, \w+: [0-9a-f]+)*)?\)$`)
	sysExitRE  = regexp.MustCompile(`^sys_[a-z_0-9]+ -> 0x[0-9a-f]+$`)
	functionRE = regexp.MustCompile(`^\w+ <-\w+$`)
)

// checkConventions checks a trace against the text conventions tools that
// read ftrace text (trace-cmd report, perfetto's text importer, the greps of
// a regression report) rely on: a '#' header, then lines that match lineRE
// with CPUs below #P, timestamps that never go back on a CPU, and event
// fields in the kernel's layout. It returns the number of event lines and
// the problems found (the first ten).
func checkConventions(tr []byte) (n int, problems []string) {
	sc := bufio.NewScanner(bytes.NewReader(tr))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	cpus := -1
	last := map[int]int64{}
	ln := 0
	fail := func(format string, args ...any) {
		if len(problems) < 10 {
			problems = append(problems, fmt.Sprintf("line %d: "+format, append([]any{ln}, args...)...))
		}
	}
	for sc.Scan() {
		ln++
		l := sc.Text()
		if strings.HasPrefix(l, "#") {
			if n > 0 {
				fail("comment after the first event: %q", l)
			}
			if i := strings.Index(l, "#P:"); i >= 0 {
				cpus, _ = strconv.Atoi(l[i+3:])
			}
			continue
		}
		n++
		m := lineRE.FindStringSubmatch(l)
		if m == nil {
			fail("does not match the trace line layout: %q", l)
			continue
		}
		cpu, _ := strconv.Atoi(m[3])
		if cpus < 0 || cpu >= cpus {
			fail("CPU %d, header announced #P:%d", cpu, cpus)
		}
		sec, _ := strconv.ParseInt(m[5], 10, 64)
		usec, _ := strconv.ParseInt(m[6], 10, 64)
		ts := sec*1e6 + usec
		if p, ok := last[cpu]; ok && ts < p {
			fail("timestamp %d us goes back on CPU %d (previous %d us)", ts, cpu, p)
		}
		last[cpu] = ts
		fn := m[7]
		switch {
		case sysEnterRE.MatchString(fn), sysExitRE.MatchString(fn), functionRE.MatchString(fn):
		default:
			e := eventRE.FindStringSubmatch(fn)
			if e == nil {
				fail("function column is neither an event, a syscall nor a function: %q", fn)
				continue
			}
			if re, ok := fieldRE[e[1]]; ok && !re.MatchString(e[2]) {
				fail("%s fields %q do not match %v", e[1], e[2], re)
			}
		}
	}
	if cpus < 0 {
		fail("no #P: header")
	}
	return n, problems
}

// requireConventions fails t with the problems checkConventions finds and
// returns the number of event lines.
func requireConventions(t *testing.T, tr []byte) int {
	t.Helper()
	n, problems := checkConventions(tr)
	for _, p := range problems {
		t.Error(p)
	}
	return n
}

// TestFtraceConventions checks the text conventions on traces of several
// scenarios: the POSIX signal report in both eras, and the default
// four-CPU cyclictest machine with kernel timers (wheel, softirqs, NO_HZ).
func TestFtraceConventions(t *testing.T) {
	tests := []struct {
		config, variant string
		vars            map[string]string
		minLines        int
	}{
		{"posix-signals", "legacy", map[string]string{"duration": "2ms"}, 5000},
		{"posix-signals", "consistent", map[string]string{"duration": "2ms"}, 5000},
		{"default", "", map[string]string{}, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.config+"/"+tt.variant, func(t *testing.T) {
			if tt.config == "default" {
				// A shorter run of the default scenario is plenty.
				src, err := os.ReadFile(filepath.Join("..", "..", "configs", "default.hcl"))
				if err != nil {
					t.Fatal(err)
				}
				s := regexp.MustCompile(`duration = "[^"]+"`).ReplaceAllString(string(src), `duration = "30ms"`)
				// Its machine profile, relative to configs/.
				profiles, err := filepath.Abs(filepath.Join("..", "..", "profiles"))
				if err != nil {
					t.Fatal(err)
				}
				s = strings.ReplaceAll(s, `"../profiles/`, `"`+profiles+`/`)
				var buf bytes.Buffer
				simtest.Run(t, s, config.Options{}, &buf)
				if n := requireConventions(t, buf.Bytes()); n < tt.minLines {
					t.Errorf("%d event lines, want >= %d", n, tt.minLines)
				}
				return
			}
			tr := runConfig(t, tt.config, tt.variant, tt.vars)
			if n := requireConventions(t, tr); n < tt.minLines {
				t.Errorf("%d event lines, want >= %d", n, tt.minLines)
			}
		})
	}
}

// TestConventionChecker makes sure the checker rejects what it should.
func TestConventionChecker(t *testing.T) {
	hdr := "# tracer: nop\n# #P:2\n"
	tests := []struct {
		name, body string
		ok         bool
	}{
		{"good", "          <idle>-0       [001] d.h1.     0.000004: hrtimer_cancel: hrtimer=00000000ed2d4a55\n", true},
		{"3 decimals", "          <idle>-0       [001] d.h1.     0.004: hrtimer_cancel: hrtimer=00000000ed2d4a55\n", false},
		{"bad cpu", "          <idle>-0       [002] d.h1.     0.000004: hrtimer_cancel: hrtimer=00000000ed2d4a55\n", false},
		{"bad fields", "          <idle>-0       [001] d.h1.     0.000004: hrtimer_cancel: timer=1\n", false},
		{"back in time", "          <idle>-0       [001] d.h1.     0.000004: local_timer_entry: vector=236\n" +
			"          <idle>-0       [001] d.h1.     0.000003: local_timer_exit: vector=236\n", false},
		{"other cpu may interleave", "          <idle>-0       [001] d.h1.     0.000004: local_timer_entry: vector=236\n" +
			"          <idle>-0       [000] d.h1.     0.000003: local_timer_exit: vector=236\n", true},
	}
	for _, tt := range tests {
		_, problems := checkConventions([]byte(hdr + tt.body))
		if ok := len(problems) == 0; ok != tt.ok {
			t.Errorf("checkConventions(%s) = %q, want ok %v", tt.name, problems, tt.ok)
		}
	}
}
