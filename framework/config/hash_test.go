package config

import (
	"strings"
	"testing"
)

const hashBase = `variable "d" { default = "fixed_100ms" }
machine {
  cpus = 8
  nohz = "full"
  nohz_full = "1-3"
}
hrtimer {
  hang_delay = var.d
  restart    = "deferred"
}
workload "cyclictest" "rt" {
  interval = "1ms"
  cpus     = [4, 5]
}
run {
  duration = "1s"
  seed     = 3
}
variant "v" { vars = { d = "max_hang_time" } }
`

func loadHash(t *testing.T, src string, opts Options) string {
	t.Helper()
	s, diags := LoadBytes("h.hcl", []byte(src), opts)
	if diags.HasErrors() {
		t.Fatalf("LoadBytes(%q):\n%s", src, diagsString(diags))
	}
	if len(s.Hash()) != 64 {
		t.Fatalf("Hash() = %q, want 64 hex digits", s.Hash())
	}
	return s.Hash()
}

func TestHashEqual(t *testing.T) {
	nine := uint64(9)
	base := loadHash(t, hashBase, Options{})
	tests := []struct {
		name string
		src  string
		opts Options
	}{
		{"comments, whitespace and order", `# a comment
run {
    seed = 3
    duration = "1000ms"    // same duration
}
workload "cyclictest" "rt" {
  cpus = [4, 5]
  interval = "1ms"
}
hrtimer {
  restart = "deferred"
  hang_delay = "fixed_100ms"
}
machine {
  nohz_full = [3, 2, 1]
  nohz = "full"
  cpus = 8.0
}
`, Options{}},
		{"value through --var", hashBase, Options{Vars: map[string]string{"d": "fixed_100ms"}}},
		{"defaults written out", hashBase + "\nclockevent \"local\" {\n  plugin = \"lapic\"\n}\n", Options{}},
		// The seed is a key of an experiment's results, not its configuration.
		{"seed override", hashBase, Options{Seed: &nine}},
		{"other seed", strings.Replace(hashBase, "seed     = 3", "seed     = 4", 1), Options{}},
	}
	for _, tt := range tests {
		if got := loadHash(t, tt.src, tt.opts); got != base {
			t.Errorf("%s: Hash() = %s, want %s as for the base file", tt.name, got, base)
		}
	}
}

func TestHashDiffers(t *testing.T) {
	base := loadHash(t, hashBase, Options{})
	tests := []struct {
		name string
		src  string
		opts Options
	}{
		{"variant", hashBase, Options{Variant: "v"}},
		{"--var", hashBase, Options{Vars: map[string]string{"d": "proportional"}}},
		{"plugin attribute", hashBase + "wheel { layout = \"cascade\" }\n", Options{}},
		{"isolation", hashBase + "wheel { isolation = \"process\" }\n", Options{}},
		// No attribute lets the loader choose (in process only for a builtin),
		// so an explicit "inprocess" is a different configuration.
		{"isolation inprocess", hashBase + "wheel { isolation = \"inprocess\" }\n", Options{}},
		{"broadcast device", hashBase + "clockevent \"broadcast\" {}\n", Options{}},
		{"kernel", hashBase + "kernel { posix_timer_signals = \"legacy\" }\n", Options{}},
		{"second workload", hashBase + "workload \"stress\" \"x\" {}\n", Options{}},
	}
	seen := map[string]string{base: "base"}
	for _, tt := range tests {
		got := loadHash(t, tt.src, tt.opts)
		if prev, ok := seen[got]; ok {
			t.Errorf("%s: Hash() = %s, the same as for %s", tt.name, got, prev)
		}
		seen[got] = tt.name
	}
}

// TestHashGolden pins the hash of the design sketch. If it changes, the hash
// document changed shape: bump hashVersion and update the value.
func TestHashGolden(t *testing.T) {
	const want = "620475d707e2683ec804273d8457dd62b971b0767ddd779f91bec28120b920bf"
	for range 5 { // map iteration must not matter
		s, diags := Load("testdata/design.hcl", Options{})
		if diags.HasErrors() {
			t.Fatalf("Load(design.hcl):\n%s", diagsString(diags))
		}
		if got := s.Hash(); got != want {
			t.Fatalf("Load(design.hcl).Hash() = %s, want %s", got, want)
		}
	}
}
