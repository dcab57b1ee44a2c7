package experiment_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/config"
	"github.com/tickemu/tickemu/framework/experiment"
	"github.com/tickemu/tickemu/framework/kernel"
	"github.com/tickemu/tickemu/framework/kernelversion"
	"github.com/tickemu/tickemu/framework/resultfmt"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/plugins/builtin"
)

// TestVersionTableCoversBuiltins: every strategy attribute (a OneOf string
// or a bool) of every builtin plugin, of the kernel block and the governor
// choice is in the version table, with eras or a reason it has none.
func TestVersionTableCoversBuiltins(t *testing.T) {
	tb, err := experiment.TableOf(builtin.Factories())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range tb.Undeclared {
		t.Errorf("%s is a strategy attribute with neither eras nor an Unversioned reason", k)
	}
	covered := map[kernelversion.Key]bool{}
	for _, s := range tb.Settings {
		covered[s.Key] = true
	}
	for _, u := range tb.Unversioned {
		covered[u.Key] = true
	}
	check := func(kind, plugin string, s sdk.Schema) {
		for _, a := range s.Attributes {
			k := kernelversion.Key{Kind: kind, Plugin: plugin, Attr: a.Name}
			if a.Strategy() && !covered[k] {
				t.Errorf("%s is a strategy attribute the version table does not cover", k)
			}
			if !a.Strategy() && (len(a.Eras) > 0 || a.Unversioned != "") {
				t.Errorf("%s has eras or a reason but is no strategy (a OneOf string or a bool)", k)
			}
		}
	}
	n := 0
	for _, f := range builtin.Factories() {
		check(string(f.Kind), f.Name, f.New().Schema())
		n++
	}
	check("kernel", "", kernel.KernelSchema())
	if !covered[config.GovernorPluginKey] {
		t.Errorf("the governor choice (%s) is not in the table", config.GovernorPluginKey)
	}
	// The table must have something to check: the builtins' strategies.
	if n < 8 || len(tb.Settings) < 10 || len(tb.Changes()) < 12 {
		t.Errorf("%d factories, %d settings, %d changes: the table lost entries", n, len(tb.Settings), len(tb.Changes()))
	}
}

// versionSrc is a machine that uses every versioned setting: the local
// device is chosen per case, the broadcast HPET and idle states make every
// plugin kind take part.
const versionSrc = `
machine {
  cpus = 2
  idle_state "C6" {
    exit_latency      = "50us"
    target_residency  = "100us"
    stops_local_timer = true
  }
}
clockevent "local" {
  plugin = %q
}
clockevent "broadcast" {
  plugin = "hpet"
}
kernel {
  version = %q
}
run {
  duration = "1ms"
}
`

// TestEveryReleaseConfigures: at every release of the covered range, with
// each local device, the kernel version gives every versioned attribute of
// the plugins used the table's value at that release, through the real
// config and plugin path, and the configuration validates (every plugin
// configured, kernel and workloads built).
func TestEveryReleaseConfigures(t *testing.T) {
	fs := builtin.Factories()
	tb, err := experiment.TableOf(fs)
	if err != nil {
		t.Fatal(err)
	}
	opener := experiment.InProcess(fs)
	// Every mainline release, and the stable point releases the eras
	// name (sdk.Era.Backports): their state is not their series'.
	if len(tb.Backports()) == 0 {
		t.Fatal("no era names a stable backport: 6.18.44's tick_restart (adcec6a7f566) is one")
	}
	for _, r := range append(kernelversion.Releases(), tb.Backports()...) {
		want := tb.At(r)
		seen := map[kernelversion.Key]bool{}
		for _, local := range []string{"lapic", "hpet", "archtimer"} {
			src := fmt.Sprintf(versionSrc, local, r)
			spec, diags := config.LoadBytes("v.hcl", []byte(src), config.Options{})
			if diags.HasErrors() {
				t.Fatalf("%s %s: %v", r, local, diags)
			}
			if spec.KernelVersion != r {
				t.Fatalf("%s: spec.KernelVersion = %s", r, spec.KernelVersion)
			}
			if err := experiment.Validate(spec, experiment.Options{Opener: opener}); err != nil {
				t.Errorf("%s with %s: %v", r, local, err)
				continue
			}
			for _, pb := range spec.Plugins {
				if k := config.GovernorPluginKey; pb.Kind == sdk.KindGovernor {
					seen[k] = true
					if pb.Plugin != want[k] {
						t.Errorf("%s: governor %s, want %s", r, pb.Plugin, want[k])
					}
				}
				_, schema, err := opener.Describe(pb.Kind, pb.Plugin)
				if err != nil {
					t.Fatal(err)
				}
				cfg, diags := spec.DecodePlugin(pb, schema)
				if diags.HasErrors() {
					t.Fatalf("%s %s: %v", r, pb.What(), diags)
				}
				for _, a := range schema.Attributes {
					k := kernelversion.Key{Kind: string(pb.Kind), Plugin: pb.Plugin, Attr: a.Name}
					if w, ok := want[k]; ok {
						seen[k] = true
						if cfg[a.Name] != w {
							t.Errorf("%s: %s = %s, want %s", r, k, cfg[a.Name], w)
						}
					}
				}
			}
			kcfg, diags := spec.DecodeKernel(kernel.KernelSchema())
			if diags.HasErrors() {
				t.Fatalf("%s kernel block: %v", r, diags)
			}
			for k, w := range want {
				if k.Kind == "kernel" {
					seen[k] = true
					if kcfg[k.Attr] != w {
						t.Errorf("%s: %s = %s, want %s", r, k, kcfg[k.Attr], w)
					}
				}
			}
		}
		for k := range want {
			if !seen[k] {
				t.Errorf("%s: %s was never configured: the test machine does not use it", r, k)
			}
		}
	}
}

// TestKernelVersionErrors: a version outside the table, or not a release,
// names the file, line and field and lists the covered range; an explicit
// attribute wins over the version and is reported as overridden.
func TestKernelVersionErrors(t *testing.T) {
	for _, v := range []string{"2.6", "7.2", "7.2.1", "5.25", "6.x", "6.18.44.1.2", "6.18-rc1", "6.18.44-fc-v1300"} {
		src := fmt.Sprintf(versionSrc, "lapic", v)
		_, diags := config.LoadBytes("v.hcl", []byte(src), config.Options{})
		if !diags.HasErrors() {
			t.Errorf("version %s: no error", v)
			continue
		}
		msg := diags.Error()
		if !strings.Contains(msg, "v.hcl:17") || !strings.Contains(msg, `"version"`) {
			t.Errorf("version %s: %s; want the file, line 17 and the field", v, msg)
		}
		if !strings.Contains(msg, kernelversion.Covered()) && !strings.Contains(msg, "not a release") {
			t.Errorf("version %s: %s; want the covered range %s", v, msg, kernelversion.Covered())
		}
	}
	for _, v := range []string{"9.0", "6.x", "6.18.44.1.2"} {
		_, diags := config.LoadBytes("v.hcl", []byte(fmt.Sprintf(versionSrc, "lapic", "6.13")), config.Options{KernelVersion: v})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), "--kernel-version") || !strings.Contains(diags.Error(), v) {
			t.Errorf("--kernel-version %s: %v", v, diags)
		}
	}
}

func TestKernelVersionOverride(t *testing.T) {
	src := strings.Replace(fmt.Sprintf(versionSrc, "lapic", "6.12"), "kernel {", "hrtimer {\n  hang_delay = \"fixed_100ms\"\n}\nkernel {\n  posix_timer_signals = \"consistent\"", 1)
	spec, diags := config.LoadBytes("v.hcl", []byte(src), config.Options{KernelVersion: "6.13"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	res, err := experiment.Run(spec, experiment.Options{Opener: experiment.InProcess(builtin.Factories())})
	if err != nil {
		t.Fatal(err)
	}
	if res.Config.KernelVersion != "6.13" {
		t.Errorf("kernel version %q, want 6.13 (--kernel-version wins over the file's 6.12)", res.Config.KernelVersion)
	}
	var got []string
	for _, o := range res.Config.Overridden {
		got = append(got, o.Setting+"="+o.Value+"/"+o.Version)
	}
	// posix_timer_signals = consistent is what 6.13 has: not an override.
	if strings.Join(got, " ") != "hrtimer.hang_delay=fixed_100ms/proportional" {
		t.Errorf("overridden = %v", got)
	}
	for _, p := range res.Plugins {
		if p.Kind == sdk.KindHRTimer && (p.Config["hang_delay"] != "fixed_100ms" || p.Config["softirq_next"] != "updated") {
			t.Errorf("hrtimer config %v: the file's hang_delay and 6.13's softirq_next", p.Config)
		}
	}
	var b strings.Builder
	if err := resultfmt.WriteText(&b, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "# kernel 6.13: versioned settings as that release has them (docs/kernel-changes.md); the file overrides hrtimer.hang_delay = fixed_100ms (the version has proportional)") {
		t.Errorf("summary lacks the version line:\n%s", b.String())
	}
}
