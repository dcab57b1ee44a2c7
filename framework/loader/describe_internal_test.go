package loader

import (
	"testing"
	"time"
)

// TestDescribeTimeout: describing a binary follows --plugin-call-timeout
// (CallTimeout) both ways, so a slow interpreter given 60 s to start is
// given as long for its first describe; no deadline with NoTimeout; 5 s by
// default; an explicit DescribeTimeout wins; StartTimeout caps all.
func TestDescribeTimeout(t *testing.T) {
	for _, tt := range []struct {
		name string
		o    Options
		want time.Duration
	}{
		{"default", Options{}, DefaultDescribeTimeout},
		{"call timeout longer", Options{CallTimeout: time.Minute}, time.Minute},
		{"call timeout shorter", Options{CallTimeout: time.Second}, time.Second},
		{"no deadlines", Options{CallTimeout: -1}, noDeadline},
		{"explicit describe", Options{CallTimeout: time.Minute, DescribeTimeout: 300 * time.Millisecond}, 300 * time.Millisecond},
		{"start caps", Options{CallTimeout: time.Minute, StartTimeout: 10 * time.Second}, 10 * time.Second},
	} {
		c := &Catalog{opts: tt.o}
		if got := c.describeTimeout(); got != tt.want {
			t.Errorf("%s: describeTimeout() = %v, want %v", tt.name, got, tt.want)
		}
	}
}
