package traceimport

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Kallsyms is the text symbols of a copy of a machine's /proc/kallsyms,
// which names the raw callback addresses of an LTTng capture (babeltrace
// prints `function = 0xFFFFFFFF810C0A10` where ftrace's %ps prints
// `function=tick_sched_timer`).
type Kallsyms struct {
	addrs []uint64 // ascending, distinct
	names []string
}

// ReadKallsyms reads path with ParseKallsyms.
func ReadKallsyms(path string) (*Kallsyms, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseKallsyms(f, path)
}

// ParseKallsyms reads /proc/kallsyms lines, "ADDR TYPE NAME [module]" as
// kernel/kallsyms.c's s_show() prints them (module symbols with a tab and
// the module's name in brackets). Only text symbols (types t, T, w, W) are
// kept: a callback is code. name is the file in messages. A file whose
// addresses are all zero was read without CAP_SYSLOG (kptr_restrict, as
// kallsyms_show_value() decides) and is refused, saying to read it as root.
func ParseKallsyms(r io.Reader, name string) (*Kallsyms, error) {
	type sym struct {
		addr uint64
		name string
	}
	var syms []sym
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	lines, nonzero := 0, false
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 3 || len(f) > 4 {
			return nil, fmt.Errorf("%s: line %d: want \"ADDR TYPE NAME [module]\", got %d fields", name, n, len(f))
		}
		addr, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: field ADDR: not a hex address: %q", name, n, f[0])
		}
		if len(f[1]) != 1 {
			return nil, fmt.Errorf("%s: line %d: field TYPE: want one letter, got %q", name, n, f[1])
		}
		if len(f) == 4 && (len(f[3]) < 3 || f[3][0] != '[' || f[3][len(f[3])-1] != ']') {
			return nil, fmt.Errorf("%s: line %d: field module: want \"[name]\", got %q", name, n, f[3])
		}
		lines++
		nonzero = nonzero || addr != 0
		switch f[1] {
		case "t", "T", "w", "W":
			if addr != 0 {
				syms = append(syms, sym{addr, f[2]})
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if lines == 0 {
		return nil, fmt.Errorf("%s: no symbols (want a copy of /proc/kallsyms)", name)
	}
	if !nonzero {
		return nil, fmt.Errorf("%s: every address is 0: kptr_restrict hides them from a reader without CAP_SYSLOG; read /proc/kallsyms as root (sudo cat /proc/kallsyms > %s)", name, name)
	}
	// Sorted by address; of symbols at one address the first in the file
	// is kept (the kernel lists a function before its aliases).
	sort.SliceStable(syms, func(i, j int) bool { return syms[i].addr < syms[j].addr })
	k := &Kallsyms{}
	for i, s := range syms {
		if i > 0 && s.addr == syms[i-1].addr {
			continue
		}
		k.addrs = append(k.addrs, s.addr)
		k.names = append(k.names, s.name)
	}
	return k, nil
}

// Lookup names the text symbol holding addr: the one with the largest
// address <= addr, as %ps prints it (no offset, no module). ok is false
// below the first text symbol.
func (k *Kallsyms) Lookup(addr uint64) (name string, ok bool) {
	i := sort.Search(len(k.addrs), func(i int) bool { return k.addrs[i] > addr })
	if i == 0 {
		return "", false
	}
	return k.names[i-1], true
}

// Name resolves a callback as the babeltrace reader keeps it
// ("0xffffffff810c0a10"); anything else (a name already) is not an address
// and gives ok false.
func (k *Kallsyms) Name(fn string) (name string, ok bool) {
	h, found := strings.CutPrefix(fn, "0x")
	if !found {
		return "", false
	}
	addr, err := strconv.ParseUint(h, 16, 64)
	if err != nil {
		return "", false
	}
	return k.Lookup(addr)
}

// IsAddress reports whether fn is a callback kept as a raw address.
func IsAddress(fn string) bool {
	h, found := strings.CutPrefix(fn, "0x")
	if !found {
		return false
	}
	_, err := strconv.ParseUint(h, 16, 64)
	return err == nil
}
