package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestHousekeeping follows kernel/sched/isolation.c:housekeeping_setup():
// attributes are applied in source order, as boot parameters are.
func TestHousekeeping(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		want     string // nohz_full isolcpus
		warnings []string
	}{
		{"disjoint masks", "nohz_full = \"2-3\"\nisolcpus = \"1-2\"", "[2 3] [1 2]", nil},
		{"nohz_full covers all", "nohz_full = \"0-3\"", "[1 2 3] []", []string{"t.hcl:5,13-18", "nohz_full covers every CPU", "boot CPU 0"}},
		{"isolcpus all", "isolcpus = \"all\"", "[] [1 2 3]", []string{"t.hcl:5,12-17", "isolcpus covers every CPU"}},
		{"second mask leaves no housekeeper", "nohz_full = \"1-3\"\nisolcpus = [0]", "[1 2 3] []", []string{"t.hcl:6,12-15", "isolcpus ignored"}},
		{"order decides which is ignored", "isolcpus = [0]\nnohz_full = \"1-3\"", "[] [0]", []string{"t.hcl:6,13-18", "nohz_full ignored"}},
		{"empty masks", "nohz_full = []\nisolcpus = \"\"", "[] []", nil},
	}
	for _, tt := range tests {
		src := "machine {\n  cpus = 4\n  nohz = \"full\"\n  # masks\n" + tt.body + "\n}\n" + runBlock
		s, diags := LoadBytes("t.hcl", []byte(src), Options{})
		if diags.HasErrors() {
			t.Errorf("%s: LoadBytes:\n%s", tt.name, diagsString(diags))
			continue
		}
		if got := fmt.Sprint(orEmpty(s.Machine.NoHZFull), " ", orEmpty(s.Machine.IsolCPUs)); got != tt.want {
			t.Errorf("%s: LoadBytes(%q) masks = %s, want %s", tt.name, tt.body, got, tt.want)
		}
		if len(tt.warnings) == 0 && len(diags) > 0 {
			t.Errorf("%s: LoadBytes(%q) =\n%s want no diagnostics", tt.name, tt.body, diagsString(diags))
		}
		if len(tt.warnings) > 0 && !containsWarning(diags, tt.warnings) {
			t.Errorf("%s: LoadBytes(%q) =\n%s want a warning containing %q", tt.name, tt.body, diagsString(diags), tt.warnings)
		}
	}
}

func orEmpty(xs []int) []int {
	if xs == nil {
		return []int{}
	}
	return xs
}

func containsWarning(diags hcl.Diagnostics, want []string) bool {
	for _, d := range diags {
		s := diagString(d)
		ok := d.Severity == hcl.DiagWarning
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return true
		}
	}
	return false
}
