package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/plugins/governor"
	"github.com/tickemu/tickemu/plugins/hrtimer"
)

// panicky is a governor that panics on its 50th Select: a plugin author's
// bug, linked in or in its own process.
type panicky struct {
	*governor.AlwaysStop
	n     int
	crash map[string]int // never made: the 50th Select writes to a nil map
}

func (p *panicky) Select(r sdk.IdleSelect) sdk.IdleChoice {
	if p.n++; p.n == 50 {
		p.crash["boom"]++ // assignment to entry in nil map
	}
	return p.AlwaysStop.Select(r)
}

func (p *panicky) Info() sdk.Info {
	i := p.AlwaysStop.Info()
	i.Name, i.Description = "panicky", "always_stop that panics on its 50th Select"
	return i
}

// liar is the builtin hrtimer base with a declared model (sdk.HRTimerModel)
// whose Start cost is 1 ns more than its answers': a plugin author's bug
// that only the model check sees.
type liar struct{ *hrtimer.Plugin }

func (l liar) HRTimerModel(cpu int) sdk.HRTimerModel {
	m := l.Plugin.HRTimerModel(cpu)
	m.StartCost++
	return m
}

func (l liar) Info() sdk.Info {
	i := l.Plugin.Info()
	i.Name, i.Description = "liar", "the builtin hrtimer whose declared model's start cost is 1 ns off"
	return i
}

// testExtras are the test binary's linked-in plugins besides the builtins,
// also when it serves them as plugin processes (TestMain).
var testExtras = []sdk.Factory{{Kind: sdk.KindGovernor, Name: "panicky",
	New: func() sdk.Plugin {
		return &panicky{AlwaysStop: governor.AlwaysStopFactory.New().(*governor.AlwaysStop)}
	}},
	{Kind: sdk.KindGovernor, Name: "hangy",
		New: func() sdk.Plugin { return &hangy{AlwaysStop: governor.AlwaysStopFactory.New().(*governor.AlwaysStop)} }},
	// The liar claims to be vetted: New clears that on every extra (only
	// the builtin list's plugins are), so it is checked linked in.
	{Kind: sdk.KindHRTimer, Name: "liar", New: func() sdk.Plugin { return liar{hrtimer.New().(*hrtimer.Plugin)} }, Vetted: true}}

// TestCheckBuiltins: a vetted plugin linked in process runs without the
// contract checker, so a lie only its checker sees goes unseen; asked for
// (Options.CheckBuiltins, --check-builtins) or metered (--plugin-stats),
// the checker is there and the run ends naming the plugin and the call.
func TestCheckBuiltins(t *testing.T) {
	spec := loadInline(t, strings.ReplaceAll(processConfig, "%DUR%", "5ms")+"hrtimer {\n  plugin = \"liar\"\n}\n")
	vettedLiar := testExtras[len(testExtras)-1] // Vetted, as a builtin would be
	op := experiment.InProcess(append(New().factories, vettedLiar))
	for _, tc := range []struct {
		name string
		o    experiment.Options
		lie  bool
	}{
		{"trusted", experiment.Options{Opener: op}, false},
		{"check-builtins", experiment.Options{Opener: op, CheckBuiltins: true}, true},
		{"plugin-stats", experiment.Options{Opener: op, PluginStats: true}, true},
	} {
		_, err := experiment.Run(spec, tc.o)
		caught := err != nil && strings.Contains(err.Error(), `hrtimer plugin "liar"`) && strings.Contains(err.Error(), "declared model")
		if caught != tc.lie || !tc.lie && err != nil {
			t.Errorf("%s: err %v; want the lie caught: %v", tc.name, err, tc.lie)
		}
	}
}

// TestModelLieSameBothWays: an hrtimer plugin whose declared answer model
// differs from its answers ends the run with the same error linked in (the
// contract checker compares each modelled answer) as in its own process
// (the transport answers from the model and checks the real answer): exit
// 1, the plugin, the call and both answers named.
func TestModelLieSameBothWays(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "p.hcl")
	src := strings.ReplaceAll(processConfig, "%DUR%", "20ms") + "hrtimer {\n  plugin = \"liar\"\n}\n"
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var firsts [2]string
	for i, iso := range []string{"inprocess", "process"} {
		var stdout, stderr bytes.Buffer
		code := New(testExtras...).Run([]string{"run", cfg, "--isolation", iso}, &stdout, &stderr)
		msg := stderr.String()
		t.Logf("isolation=%s: exit %d\n%s", iso, code, msg)
		for _, l := range strings.Split(msg, "\n") {
			if strings.HasPrefix(l, "tickemu: ") {
				firsts[i] = l
				break
			}
		}
		if code != 1 || !strings.Contains(firsts[i], `hrtimer plugin "liar"`) || !strings.Contains(firsts[i], "Start") ||
			!strings.Contains(firsts[i], "where its declared model (sdk.HRTimerModel) gives") {
			t.Errorf("isolation=%s: exit %d, %q; want exit 1 naming the plugin, Start and the model", iso, code, firsts[i])
		}
	}
	if firsts[0] != firsts[1] {
		t.Errorf("the error differs:\n in process: %s\n process:    %s", firsts[0], firsts[1])
	}
}

// TestPluginPanicSameBothWays: a plugin that panics ends the run with the
// same message and exit status whether it is linked in or runs in its own
// process: exit 1, the plugin, the call and the panic value named, and the
// plugin's stack, not a Go crash trace.
func TestPluginPanicSameBothWays(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "p.hcl")
	src := strings.Replace(strings.ReplaceAll(processConfig, "%DUR%", "20ms"), `plugin = "teo"`, `plugin = "panicky"`, 1)
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		code      int
		first     string
		hasStack  bool
		goroutine bool
	}
	var got [2]outcome
	for i, iso := range []string{"inprocess", "process"} {
		var stdout, stderr bytes.Buffer
		code := New(testExtras...).Run([]string{"run", cfg, "--isolation", iso, "--log-format", "json"}, &stdout, &stderr)
		msg := stderr.String()
		t.Logf("isolation=%s: exit %d\n%s", iso, code, msg)
		first := ""
		for _, l := range strings.Split(msg, "\n") {
			if strings.HasPrefix(l, "tickemu: ") {
				first = strings.Join(strings.Fields(l), " ")
				break
			}
		}
		// The process's pid is the one difference allowed.
		if j := strings.Index(first, " (pid "); j >= 0 {
			k := strings.Index(first[j:], ")")
			first = first[:j] + first[j+k+1:]
		}
		got[i] = outcome{code: code, first: first, hasStack: strings.Contains(msg, "plugin stack:"),
			goroutine: strings.Contains(msg, "goroutine ") && strings.Contains(msg, "panicky).Select")}
	}
	if got[0] != got[1] {
		t.Errorf("in process and out of process differ:\n in process: %+v\n process:    %+v", got[0], got[1])
	}
	for i, g := range got {
		if g.code != 1 || !strings.Contains(g.first, `governor plugin "panicky"`) || !strings.Contains(g.first, "during Select") ||
			!strings.Contains(g.first, "assignment to entry in nil map") || !g.hasStack || !g.goroutine {
			t.Errorf("isolation %d: %+v, want exit 1 naming the plugin, the call and the panic, with the plugin's stack", i, g)
		}
	}
}

// hangy is a governor whose 50th Select never returns: a plugin author's
// deadlock, linked in or in its own process.
type hangy struct {
	*governor.AlwaysStop
	n int
}

func (p *hangy) Select(r sdk.IdleSelect) sdk.IdleChoice {
	if p.n++; p.n == 50 {
		for {
			time.Sleep(time.Hour)
		}
	}
	return p.AlwaysStop.Select(r)
}

func (p *hangy) Info() sdk.Info {
	i := p.AlwaysStop.Info()
	i.Name, i.Description = "hangy", "always_stop whose 50th Select never returns"
	return i
}

// TestAttackPluginHangSameBothWays (issue 31): a plugin call that never
// returns ends the run with exit 1 naming the plugin, the call and the
// deadline, the same linked in as in its own process (linked in, it hung
// the run for ever, --max-wall included); --max-wall holds below the call
// deadline.
func TestAttackPluginHangSameBothWays(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "h.hcl")
	src := strings.Replace(strings.ReplaceAll(processConfig, "%DUR%", "20ms"), `plugin = "teo"`, `plugin = "hangy"`, 1)
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	first := func(args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := New(testExtras...).Run(append([]string{"run", cfg}, args...), &stdout, &stderr)
		for _, l := range strings.Split(stderr.String(), "\n") {
			if strings.HasPrefix(l, "tickemu: ") {
				if j := strings.Index(l, " (pid "); j >= 0 { // the one difference allowed
					l = l[:j] + l[j+strings.Index(l[j:], ")")+1:]
				}
				return code, l
			}
		}
		return code, stderr.String()
	}
	want := `tickemu: run aborted: governor plugin "hangy" stopped answering during Select: no answer within 2s`
	for _, iso := range []string{"inprocess", "process"} {
		code, msg := first("--isolation", iso, "--plugin-call-timeout", "2s")
		if code != 1 || msg != want {
			t.Errorf("isolation %s: exit %d, %q; want exit 1, %q", iso, code, msg, want)
		}
	}
	code, msg := first("--isolation", "inprocess", "--max-wall", "1s", "--plugin-call-timeout", "1h")
	if code != 1 || !strings.Contains(msg, `governor plugin "hangy" stopped answering during Select: no answer within`) ||
		!strings.Contains(msg, "max_wall 1s reached") {
		t.Errorf("--max-wall 1s: exit %d, %q", code, msg)
	}
}
