package limitio

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	for _, tc := range []struct {
		in      string
		limit   int64
		tooLong bool
	}{
		{"", 0, false},
		{"abc", 3, false},
		{"abcd", 3, true},
		{"abc", 0, true},
		{strings.Repeat("x", 100000), 99999, true},
		{strings.Repeat("x", 100000), 100000, false},
	} {
		got, err := io.ReadAll(Reader(strings.NewReader(tc.in), tc.limit, "in", "a test"))
		var tl *TooLargeError
		if errors.As(err, &tl) != tc.tooLong {
			t.Errorf("%d bytes, limit %d: err = %v", len(tc.in), tc.limit, err)
		}
		if int64(len(got)) > tc.limit || (!tc.tooLong && string(got) != tc.in) {
			t.Errorf("%d bytes, limit %d: read %d", len(tc.in), tc.limit, len(got))
		}
	}
}

// TestAttackReadFileEndless (issue 31) reads /dev/zero: it stops at the limit, naming it.
func TestAttackReadFileEndless(t *testing.T) {
	_, err := ReadFile("/dev/zero", 4<<20, "a configuration file")
	if err == nil || err.Error() != "/dev/zero is larger than the 4 MiB limit for a configuration file" {
		t.Fatalf("err = %v", err)
	}
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("hello"), 0o644)
	if b, err := ReadFile(p, 5, "x"); err != nil || string(b) != "hello" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{4 << 20: "4 MiB", 16 << 30: "16 GiB", 1536: "1536 bytes", 2048: "2 KiB", 7: "7 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
