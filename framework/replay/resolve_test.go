package replay

import (
	"slices"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/framework/traceimport"
)

// TestScoreResolve: raw addresses become the symbols holding them; two
// that land in one symbol, or on a callback already named so, are counted
// together (lateness histograms merged); addresses below every symbol
// stay raw and are returned.
func TestScoreResolve(t *testing.T) {
	k, err := traceimport.ParseKallsyms(strings.NewReader(
		"ffffffff81075060 t process_timeout\nffffffff810d7e00 t hrtimer_wakeup\n"), "k")
	if err != nil {
		t.Fatal(err)
	}
	fs := func(fn string, wheel bool, starts int64, late ...int64) *FuncScore {
		f := &FuncScore{Function: fn, Wheel: wheel, Starts: starts, Expiries: int64(len(late))}
		for _, l := range late {
			f.Lateness.Add(l)
		}
		return f
	}
	s := &Score{Funcs: map[string]*FuncScore{
		"timer:0xffffffff81075060": fs("0xffffffff81075060", true, 2, 1000),
		"timer:0xffffffff81075068": fs("0xffffffff81075068", true, 1, 3000), // inside process_timeout
		"timer:process_timeout":    fs("process_timeout", true, 4),          // the model's own
		"0xffffffff810d7e00":       fs("0xffffffff810d7e00", false, 1, 50),  // an hrtimer
		"timer:0xffffffff81000000": fs("0xffffffff81000000", true, 1),       // below every symbol
		"0x1000":                   fs("0x1000", false, 1),
	}}
	raw := s.Resolve(k.Name)
	if want := []string{"0x1000", "0xffffffff81000000"}; !slices.Equal(raw, want) {
		t.Errorf("unresolved = %v, want %v", raw, want)
	}
	pt := s.Funcs["timer:process_timeout"]
	if pt == nil || pt.Starts != 7 || pt.Expiries != 2 || pt.Lateness.Count() != 2 || pt.Lateness.Quantile(1) != 3000 || pt.Lateness.Quantile(0) != 1000 || pt.Function != "process_timeout" || !pt.Wheel {
		t.Errorf("timer:process_timeout = %+v", pt)
	}
	if w := s.Funcs["hrtimer_wakeup"]; w == nil || w.Starts != 1 || w.Lateness.Count() != 1 {
		t.Errorf("hrtimer_wakeup = %+v", w)
	}
	var keys []string
	for k := range s.Funcs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"0x1000", "hrtimer_wakeup", "timer:0xffffffff81000000", "timer:process_timeout"}; !slices.Equal(keys, want) {
		t.Errorf("keys = %v, want %v", keys, want)
	}
	// Resolving again changes nothing: the names are no longer addresses.
	if raw := s.Resolve(k.Name); len(raw) != 2 || s.Funcs["timer:process_timeout"].Starts != 7 {
		t.Errorf("second Resolve: %v, %+v", raw, s.Funcs["timer:process_timeout"])
	}
}
