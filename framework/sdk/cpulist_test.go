package sdk

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestParseCPUList: CPUs in the order written, repeats kept; "all" and ""
// are every CPU; a CPU the machine lacks or bad syntax is an error naming
// the list.
func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  string // "" for none
	}{
		{"0-3,8", []int{0, 1, 2, 3, 8}, ""},
		{"all", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, ""},
		{"", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, ""},
		{" 2 , 1-1 ", []int{2, 1}, ""},
		{"9", []int{9}, ""},
		{"3,3", []int{3, 3}, ""},
		{"10", nil, `CPU 10 in "10" does not exist (machine has 10)`},
		{"5-20", nil, `CPU 10 in "5-20" does not exist (machine has 10)`},
		{"12-14", nil, `CPU 12 in "12-14" does not exist (machine has 10)`},
		{"0-999999999999", nil, `CPU 10 in "0-999999999999" does not exist (machine has 10)`},
		{"3-1", nil, `bad cpulist "3-1"`},
		{"x", nil, `bad cpulist "x"`},
		{"-1", nil, `bad cpulist "-1"`},
		{"1,", nil, `bad cpulist "1,"`},
		{"1-", nil, `bad cpulist "1-"`},
	} {
		got, err := ParseCPUList(tc.in, 10)
		if tc.err == "" && (err != nil || !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("ParseCPUList(%q, 10) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || err.Error() != tc.err) {
			t.Errorf("ParseCPUList(%q, 10) = %v, %v; want error %q", tc.in, got, err, tc.err)
		}
	}
}

// TestConfigCPUList: the getter and the reader name the attribute, and the
// reader records one error diagnostic and returns nil.
func TestConfigCPUList(t *testing.T) {
	c := Config{"cpus": "1-2", "far": "7"}
	if got, err := c.CPUList("cpus", 4); err != nil || !reflect.DeepEqual(got, []int{1, 2}) {
		t.Errorf(`CPUList("cpus", 4) = %v, %v`, got, err)
	}
	_, err := c.CPUList("far", 4)
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Attribute != "far" || err.Error() != `attribute far = "7": CPU 7 in "7" does not exist (machine has 4)` {
		t.Errorf(`CPUList("far", 4) error = %v`, err)
	}
	for _, name := range []string{"far", "missing"} {
		r := c.Reader()
		if got := r.CPUList(name, 4); got != nil {
			t.Errorf("reader CPUList(%q) = %v, want nil", name, got)
		}
		if d := r.Diagnostics(); len(d) != 1 || d[0].Attribute != name || !d.HasErrors() {
			t.Errorf("reader CPUList(%q) diagnostics = %v, want one error on it", name, d)
		}
	}
}

// FuzzParseCPUList: no input panics; what parses is CPUs of the machine,
// and the list written back as numbers parses to the same CPUs.
func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0-3,8", "all", "", "3-1", "1,,2", " 7 ", "0-4095", "2,1,2"} {
		f.Add(s, 8)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = 1 + abs(n)%4096
		cpus, err := ParseCPUList(s, n)
		if err != nil {
			return
		}
		var parts []string
		for _, c := range cpus {
			if c < 0 || c >= n {
				t.Fatalf("ParseCPUList(%q, %d) = %v: CPU %d out of range", s, n, cpus, c)
			}
			parts = append(parts, strconv.Itoa(c))
		}
		if len(parts) == 0 {
			return // a list of no CPUs cannot be written back
		}
		back, err := ParseCPUList(strings.Join(parts, ","), n)
		if err != nil || !reflect.DeepEqual(back, cpus) {
			t.Fatalf("ParseCPUList(%q, %d) = %v, but its numbers parse to %v, %v", s, n, cpus, back, err)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
