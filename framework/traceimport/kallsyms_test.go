package traceimport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseKallsyms(t *testing.T) {
	// Lines as kernel/kallsyms.c's s_show() prints them: core symbols
	// "%px %c %s", module symbols with "\t[%s]".
	const x86 = "0000000000000000 A fixed_percpu_data\n" +
		"ffffffff81000000 T _text\n" +
		"ffffffff810c0a10 t tick_sched_timer\n" +
		"ffffffff810c0a10 T tick_sched_timer_alias\n" + // same address: the first wins
		"ffffffff810c0b00 d tick_data\n" + // data: never a callback
		"ffffffff810c0c00 W weak_fn\n" +
		"ffffffff810c0d00 w weak_local\n" +
		"ffffffff810c0e00 r rodata_sym\n" +
		"ffffffffc0a01000 t e1000_watchdog\t[e1000]\n" +
		"ffffffffc0a02000 b e1000_bss\t[e1000]\n"
	type lookup struct {
		addr uint64
		name string // "" for no symbol
	}
	tests := []struct {
		name    string
		in      string
		wantErr string
		lookups []lookup
	}{
		{name: "x86-64 with a module", in: x86, lookups: []lookup{
			{0xffffffff80ffffff, ""}, // below the first text symbol
			{0xffffffff81000000, "_text"},
			{0xffffffff810c0a10, "tick_sched_timer"},
			{0xffffffff810c0a48, "tick_sched_timer"}, // inside it
			{0xffffffff810c0b10, "tick_sched_timer"}, // a data symbol is skipped
			{0xffffffff810c0c00, "weak_fn"},
			{0xffffffff810c0d04, "weak_local"},
			{0xffffffff810c0e08, "weak_local"}, // rodata skipped
			{0xffffffffc0a01000, "e1000_watchdog"},
			{0xffffffffc0a02040, "e1000_watchdog"}, // bss skipped
		}},
		{name: "32-bit ARM, blank lines", in: "\nc0008000 T stext\nc006ae10 t tick_sched_timer\n\n", lookups: []lookup{
			{0xc006ae10, "tick_sched_timer"}, {0xc0007fff, ""}, {0xc0008004, "stext"},
		}},
		{name: "kptr_restrict zeroes", in: "0000000000000000 T _text\n0000000000000000 t tick_sched_timer\n0000000000000000 t e1000_watchdog\t[e1000]\n",
			wantErr: "syms.txt: every address is 0: kptr_restrict hides them from a reader without CAP_SYSLOG; read /proc/kallsyms as root"},
		{name: "empty", in: "\n\n", wantErr: "syms.txt: no symbols (want a copy of /proc/kallsyms)"},
		{name: "too few fields", in: "ffffffff81000000 T _text\nffffffff81000010 T\n", wantErr: "syms.txt: line 2: want \"ADDR TYPE NAME [module]\", got 2 fields"},
		{name: "too many fields", in: "ffffffff81000000 T _text [a] b\n", wantErr: "syms.txt: line 1: want \"ADDR TYPE NAME [module]\", got 5 fields"},
		{name: "not hex", in: "ffffffff8100000g T _text\n", wantErr: `syms.txt: line 1: field ADDR: not a hex address: "ffffffff8100000g"`},
		{name: "address too wide", in: "1ffffffff81000000 T _text\n", wantErr: "syms.txt: line 1: field ADDR"},
		{name: "type not a letter", in: "ffffffff81000000 TT _text\n", wantErr: `syms.txt: line 1: field TYPE: want one letter, got "TT"`},
		{name: "module without brackets", in: "ffffffffc0a01000 t e1000_watchdog e1000\n", wantErr: `syms.txt: line 1: field module: want "[name]", got "e1000"`},
		{name: "System.map without text", in: "ffffffff81a00000 D _sdata\n", lookups: []lookup{{0xffffffff81a00000, ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := ParseKallsyms(strings.NewReader(tt.in), "syms.txt")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range tt.lookups {
				name, ok := k.Lookup(l.addr)
				if name != l.name || ok != (l.name != "") {
					t.Errorf("Lookup(%#x) = %q, %v; want %q", l.addr, name, ok, l.name)
				}
			}
		})
	}
}

func TestKallsymsName(t *testing.T) {
	k, err := ParseKallsyms(strings.NewReader("ffffffff810c0a10 t tick_sched_timer\n"), "k")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fn, want string
		addr     bool // IsAddress
	}{
		{"0xffffffff810c0a10", "tick_sched_timer", true},
		{"0xffffffff810c0a20", "tick_sched_timer", true},
		{"0x10", "", true},                  // below every symbol
		{"tick_sched_timer", "", false},     // a name already
		{"0xnot", "", false},                // not an address
		{"hrtimer_wakeup/0x0", "", false},   // trace-cmd's plugin format is a name
		{"0xffffffffffffffffff", "", false}, // wider than 64 bits
		{"(unknown)", "", false},
	} {
		name, ok := k.Name(c.fn)
		if name != c.want || ok != (c.want != "") {
			t.Errorf("Name(%q) = %q, %v; want %q", c.fn, name, ok, c.want)
		}
		if IsAddress(c.fn) != c.addr {
			t.Errorf("IsAddress(%q) = %v, want %v", c.fn, !c.addr, c.addr)
		}
	}
}

// TestKallsymsCommitted reads the replay test's kallsyms file: it names
// every callback address of the LTTng capture beside it.
func TestKallsymsCommitted(t *testing.T) {
	k, err := ReadKallsyms(filepath.Join("..", "replay", "testdata", "captures", "lttng-scp-vm-3.6.kallsyms"))
	if err != nil {
		t.Fatal(err)
	}
	if name, ok := k.Lookup(0xffffffffa022b4a0); !ok || name != "e1000_watchdog" {
		t.Errorf("the module callback = %q, %v", name, ok)
	}
	if _, err := ReadKallsyms(filepath.Join("testdata", "nosuch.kallsyms")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}

// FuzzKallsyms: any input parses or fails with a message naming the file;
// every text symbol parsed is found at its own address, and a lookup never
// names a symbol above the address.
func FuzzKallsyms(f *testing.F) {
	f.Add("ffffffff810c0a10 t tick_sched_timer\nffffffffc0a01000 t e1000_watchdog\t[e1000]\n")
	f.Add("0000000000000000 T _text\n")
	f.Add("c006ae10 T a\nc006ae10 t b\nc006ae00 d c\n")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseKallsyms(strings.NewReader(s), "fuzz.kallsyms")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.kallsyms: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for i, a := range k.addrs {
			if i > 0 && a <= k.addrs[i-1] {
				t.Fatalf("addresses not ascending: %#x after %#x", a, k.addrs[i-1])
			}
			if name, ok := k.Lookup(a); !ok || name != k.names[i] {
				t.Fatalf("Lookup(%#x) = %q, %v; want %q", a, name, ok, k.names[i])
			}
			if i > 0 {
				if name, ok := k.Lookup(a - 1); !ok || name != k.names[i-1] {
					t.Fatalf("Lookup(%#x) = %q, %v; want %q", a-1, name, ok, k.names[i-1])
				}
			} else if _, ok := k.Lookup(a - 1); ok {
				t.Fatalf("Lookup(%#x) below the first symbol found one", a-1)
			}
		}
	})
}
