package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
)

var (
	profileKernelSchema = sdk.Schema{Attributes: []sdk.Attribute{
		{Name: "irq_entry_cost", Type: sdk.TypeDuration, Default: "250ns"},
		{Name: "wakeup_cost", Type: sdk.TypeDuration, Default: "400ns"},
		{Name: "syscall_cost", Type: sdk.TypeDuration, Default: "150ns"},
	}}
	profileLapicSchema = sdk.Schema{Attributes: []sdk.Attribute{
		{Name: "deadline_write_cost", Type: sdk.TypeDuration, Default: "60ns"},
	}}
)

// TestProfileOverrideOrder: the scenario's own attribute beats the
// profile's, the profile's beats the schema default, and a profile block for
// another plugin than the scenario's is not applied.
func TestProfileOverrideOrder(t *testing.T) {
	s, diags := Load("testdata/profile/scenario.hcl", Options{})
	if diags.HasErrors() {
		t.Fatalf("Load: %s", diagsString(diags))
	}
	cfg, diags := s.DecodeBody(s.Kernel, profileKernelSchema, "kernel block")
	if diags.HasErrors() {
		t.Fatalf("kernel: %s", diagsString(diags))
	}
	want := map[string]string{"irq_entry_cost": "900", "wakeup_cost": "500", "syscall_cost": "150"}
	for k, v := range want {
		if cfg[k] != v {
			t.Errorf("kernel %s = %q, want %q (profile %s)", k, cfg[k], v, map[string]string{"irq_entry_cost": "from the profile", "wakeup_cost": "the scenario's", "syscall_cost": "the default"}[k])
		}
	}
	p, ok := s.Plugin(sdk.KindClockEvent, "local")
	if !ok {
		t.Fatal("no local clockevent")
	}
	cfg, diags = s.DecodePlugin(p, profileLapicSchema)
	if diags.HasErrors() || cfg["deadline_write_cost"] != "12000" {
		t.Errorf("lapic deadline_write_cost = %q (%s), want 12000 from the profile", cfg["deadline_write_cost"], diagsString(diags))
	}
	if _, ok := s.Plugin(sdk.KindClockEvent, "broadcast"); ok {
		t.Error("the profile's broadcast block added a device the scenario does not have")
	}
	if _, ok := s.Files()[filepath.Join("testdata/profile", "profiles/kvm.hcl")]; !ok {
		t.Errorf("Files() = %v, want the profile among them (for diagnostics' snippets)", s.Files())
	}

	// The same scenario with hpet as its local device: the lapic block is not for it.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "p.hcl"), "clockevent \"local\" {\n  plugin = \"lapic\"\n  deadline_write_cost = \"12us\"\n}\n")
	writeFile(t, filepath.Join(dir, "s.hcl"), "machine {\n  profile = \"p.hcl\"\n}\nclockevent \"local\" {\n  plugin = \"hpet\"\n}\nrun { duration = \"1s\" }\n")
	s, diags = Load(filepath.Join(dir, "s.hcl"), Options{})
	if diags.HasErrors() {
		t.Fatalf("Load: %s", diagsString(diags))
	}
	p, _ = s.Plugin(sdk.KindClockEvent, "local")
	if _, diags = s.DecodePlugin(p, sdk.Schema{}); diags.HasErrors() {
		t.Errorf("hpet block got the lapic profile's attributes: %s", diagsString(diags))
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestProfileErrors: what goes wrong in a profile is reported at the
// profile's file, line and field; a missing profile at the scenario's line.
func TestProfileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, profile, scenarioMachine string
		kernel                         bool // the error shows when the kernel block is decoded
		want                           string
	}{
		{"missing file", "", `profile = "nope.hcl"`, false, "s.hcl:2,13-23: error: Cannot read machine profile"},
		{"unknown kernel attribute", "kernel {\n  irq_entry_cost = \"1us\"\n  irq_entri_cost = \"1us\"\n}\n", `profile = "p.hcl"`, true,
			`p.hcl:3,3-17: error: Unsupported argument; An argument named "irq_entri_cost" is not expected here.`},
		{"bad value", "kernel {\n  wakeup_cost = 7\n}\n", `profile = "p.hcl"`, true, `p.hcl:2,17-18: error: Invalid value for "wakeup_cost"`},
		{"unknown block", "machine {\n  hz = 250\n}\n", `profile = "p.hcl"`, false, `p.hcl:1,1-8: error: Unsupported block type`},
		{"nested block", "kernel {\n  x {\n  }\n}\n", `profile = "p.hcl"`, false, `p.hcl:2,3-4: error: Unsupported block in a machine profile`},
		{"unknown role", "clockevent \"lokal\" {\n}\n", `profile = "p.hcl"`, false, `p.hcl:1,12-19: error: Unknown clockevent role`},
		{"not a string", "", `profile = [1]`, false, `s.hcl:2,13-16: error: Invalid value for "profile"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeFile(t, filepath.Join(dir, "p.hcl"), tc.profile)
			writeFile(t, filepath.Join(dir, "s.hcl"), "machine {\n  "+tc.scenarioMachine+"\n}\nrun { duration = \"1s\" }\n")
			s, diags := Load(filepath.Join(dir, "s.hcl"), Options{})
			if tc.kernel {
				if diags.HasErrors() {
					t.Fatalf("Load: %s", diagsString(diags))
				}
				_, diags = s.DecodeBody(s.Kernel, profileKernelSchema, "kernel block")
			}
			got := strings.ReplaceAll(diagsString(diags), dir+string(filepath.Separator), "")
			if !strings.Contains(got, tc.want) {
				t.Errorf("diagnostics:\n%s\nwant one starting %q", got, tc.want)
			}
		})
	}
}
