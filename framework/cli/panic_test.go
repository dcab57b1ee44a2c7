package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/plugins/governor"
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

// testExtras are the test binary's linked-in plugins besides the builtins,
// also when it serves them as plugin processes (TestMain).
var testExtras = []sdk.Factory{{Kind: sdk.KindGovernor, Name: "panicky",
	New: func() sdk.Plugin { return &panicky{AlwaysStop: governor.NewAlwaysStop().(*governor.AlwaysStop)} }}}

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
