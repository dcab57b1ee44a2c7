package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMigrationCounts: an hrtimer expiry counts as moved when it expires on
// another CPU than the hrtimer_start that armed it; an expiry whose start is
// not in the capture is not counted.
func TestMigrationCounts(t *testing.T) {
	trace := `# tracer: nop
#
# entries-in-buffer/entries-written: 6/6   #P:2
#
     stress-ng-10    [000] d..1.   100.000010: hrtimer_start: hrtimer=ffff000000000001 function=posix_timer_fn expires=100000500000 softexpires=100000500000 mode=ABS
          <idle>-0   [001] d.h1.   100.000100: hrtimer_expire_entry: hrtimer=ffff000000000002 function=posix_timer_fn now=100000100000
     stress-ng-10    [000] d..1.   100.000200: hrtimer_start: hrtimer=ffff000000000003 function=hrtimer_wakeup expires=100000300000 softexpires=100000300000 mode=ABS
          <idle>-0   [000] d.h1.   100.000300: hrtimer_expire_entry: hrtimer=ffff000000000003 function=hrtimer_wakeup now=100000300000
          <idle>-0   [001] d.h1.   100.000500: hrtimer_expire_entry: hrtimer=ffff000000000001 function=posix_timer_fn now=100000500000
`
	path := filepath.Join(t.TempDir(), "t.txt")
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	m, tm, err := migrationCounts(path)
	if err != nil {
		t.Fatal(err)
	}
	if tm != -1 {
		t.Errorf("timer_migration %d for a plain trace, want -1 (not recorded)", tm)
	}
	for fn, want := range map[string][2]int64{"posix_timer_fn": {1, 1}, "hrtimer_wakeup": {1, 0}} {
		if m.expiries[fn] != want[0] || m.elsewhere[fn] != want[1] {
			t.Errorf("%s: %d of %d expiries elsewhere, want %d of %d", fn, m.elsewhere[fn], m.expiries[fn], want[1], want[0])
		}
	}
}
