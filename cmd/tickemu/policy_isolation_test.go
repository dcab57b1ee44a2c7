package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/cli"
)

// TestPolicyIsolationMatrix runs configs/hang-timermix.hcl with a hang_policy
// block (max_hang_time, the strategy the file selects) for every pair of
// isolations of the hrtimer base and the policy: a base in its own process
// asks the host's policy over its session (framework/sdk/shim,
// policypeer.go), so all four must print the same bytes but for the config
// hash (the files differ in their isolation lines), and the same hangs as
// the builtin strategy without the block. --plugin-stats says what each
// decision costs: one more round trip of the base's Interrupt when the base
// runs out of process (beyond the builtin's, whose hrtimer model answers the
// same calls: the hang policy leaves it valid), one of the policy's own
// session when it does.
func TestPolicyIsolationMatrix(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	src, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "configs", "hang-timermix.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	base := string(src)
	// 400 ms has 24 hangs (600 ms: 56) and keeps the runs with the base in
	// its own process (about 370000 round trips each) short.
	base = mustReplace(t, base, `default     = "600ms"`, `default     = "400ms"`)
	if testing.Short() {
		// make test, and make ci under the race detector (where the five
		// runs took 160 s): re-tuning the periods every 512 signals hangs
		// sooner, 19 hangs in 100 ms, a quarter of the round trips.
		base = mustReplace(t, base, `default     = "400ms"`, `default     = "100ms"`)
		base = mustReplace(t, base, `adjust_every = 8192`, `adjust_every = 512`)
	}
	dir := t.TempDir()
	write := func(name, baseIso, polIso string) string {
		cfg := base
		if baseIso != "" {
			cfg = mustReplace(t, cfg, "hrtimer {\n", "hrtimer {\n  isolation = \""+baseIso+"\"\n")
		}
		if polIso != "" {
			cfg += "\nhang_policy {\n  plugin    = \"max_hang_time\"\n  isolation = \"" + polIso + "\"\n}\n"
		}
		p := filepath.Join(dir, name+".hcl")
		if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(path string, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if st := cli.New().Run(append([]string{"run", path}, args...), &out, &errb); st != 0 {
			t.Fatalf("tickemu run %s %v: status %d\n%s", filepath.Base(path), args, st, errb.String())
		}
		return out.String()
	}
	hash := regexp.MustCompile(`config [0-9a-f]+`)
	hangs := regexp.MustCompile(`(?m)^hrtimer: .* hangs ([0-9]+) `)
	intrRow := regexp.MustCompile(`(?m)^hrtimer hrtimer .*\n(?:  .*\n)*?  Interrupt +([0-9]+) +([0-9]+) `)
	// The builtin strategy, the hrtimer in its own process: the hangs to
	// decide, and the Interrupt round trips without a policy to ask (fewer
	// than the calls: the hrtimer's model answers some).
	builtin := run(write("builtin", "process", ""), "--plugin-stats")
	mb := hangs.FindStringSubmatch(builtin)
	if mb == nil || mb[1] == "0" {
		t.Fatalf("the builtin run has no hangs to decide:\n%s", builtin)
	}
	bi := intrRow.FindStringSubmatch(builtin)
	if bi == nil {
		t.Fatalf("the builtin run has no hrtimer Interrupt row:\n%s", builtin)
	}

	var first, firstName string
	for _, c := range []struct{ base, pol string }{
		{"inprocess", "inprocess"}, {"inprocess", "process"}, {"process", "inprocess"}, {"process", "process"},
	} {
		name := "base-" + c.base + "-policy-" + c.pol
		out := run(write(name, c.base, c.pol), "--plugin-stats")
		results, stats, ok := strings.Cut(out, "== plugin calls")
		if !ok {
			t.Fatalf("%s: no --plugin-stats section:\n%s", name, out)
		}
		results = hash.ReplaceAllString(results, "config HASH")
		if m := hangs.FindStringSubmatch(results); m == nil || m[1] != mb[1] {
			t.Errorf("%s: hangs %v, the builtin strategy has %s", name, m, mb[1])
		}
		// The decisions: the policy's Hang calls, its round trips, and the
		// base's Interrupt round trips beyond its calls.
		hang := regexp.MustCompile(`(?m)^  Hang +([0-9]+) +([0-9]+) `).FindStringSubmatch(stats)
		intr := intrRow.FindStringSubmatch(stats)
		if hang == nil || intr == nil {
			t.Fatalf("%s: no Hang or Interrupt row:\n%s", name, stats)
		}
		if hang[1] != mb[1] {
			t.Errorf("%s: %s Hang calls, want one per hang (%s)", name, hang[1], mb[1])
		}
		wantPolTrips, wantExtra := "0", 0
		if c.pol == "process" {
			wantPolTrips = hang[1]
		}
		if c.base == "process" {
			wantExtra = atoi(t, hang[1])
		}
		if hang[2] != wantPolTrips {
			t.Errorf("%s: the policy's Hang made %s round trips, want %s", name, hang[2], wantPolTrips)
		}
		if intr[1] != bi[1] {
			t.Errorf("%s: %s Interrupt calls, the builtin %s", name, intr[1], bi[1])
		}
		if got := atoi(t, intr[2]) - atoi(t, bi[2]); c.base == "process" && got != wantExtra {
			t.Errorf("%s: the base's Interrupt made %d round trips more than the builtin's, want %d (one per decision)", name, got, wantExtra)
		}
		t.Logf("%s: %s Hang decisions, policy round trips %s, base Interrupt calls %s round trips %s", name, hang[1], hang[2], intr[1], intr[2])
		if first == "" {
			first, firstName = results, name
			continue
		}
		if results != first {
			t.Errorf("%s prints other results than %s:\n--- %s\n%s\n--- %s\n%s", name, firstName, firstName, first, name, results)
		}
	}
}

func mustReplace(t *testing.T, s, old, new string) string {
	t.Helper()
	if strings.Count(s, old) != 1 {
		t.Fatalf("configs/hang-timermix.hcl: want %q once", old)
	}
	return strings.Replace(s, old, new, 1)
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
