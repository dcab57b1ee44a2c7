package cli

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestTraceReaderGoesAway: a trace written into a pipe whose reader stops
// after one line (`--trace /dev/stdout | head -1`) ends the run with a write
// error and exit status 1. The trace is opened write-only: had tickemu
// opened it read-write it would hold a reader itself, writes would never
// fail and the run would block on the full pipe for ever.
func TestTraceReaderGoesAway(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "trace.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	first := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo) // blocks until tickemu opens the write end
		if err != nil {
			first <- err.Error()
			return
		}
		line, _ := bufio.NewReader(f).ReadString('\n')
		f.Close() // head -1 exits
		first <- line
	}()
	var stdout, stderr bytes.Buffer
	code := mainWith([]string{"run", filepath.Join("..", "..", "configs", "posix-signals.hcl"), "--trace", fifo}, &stdout, &stderr)
	if line := <-first; line != "# tracer: function\n" { // every event: the function tracer's lines too
		t.Errorf("reader got %q", line)
	}
	if code != 1 || !strings.Contains(stderr.String(), "broken pipe") {
		t.Errorf("exit %d, stderr %q: want 1 and a broken pipe", code, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("a failed run printed a summary:\n%s", stdout.String())
	}
}

func TestParseWindowAndSize(t *testing.T) {
	for _, c := range []struct {
		in       string
		from, to int64
		err      string
	}{
		{"300s..300.2s", 300e9, 300.2e9, ""},
		{"..5ms", 0, 5e6, ""},
		{"1s..", 1e9, 0, ""},
		{"5ms", 0, 0, "want FROM..TO"},
		{"2s..1s", 0, 0, "TO must be after FROM"},
		{"x..1s", 0, 0, "FROM"},
	} {
		f, to, err := parseWindow(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("parseWindow(%q) = %v, want error %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || int64(f) != c.from || int64(to) != c.to {
			t.Errorf("parseWindow(%q) = %d, %d, %v; want %d, %d", c.in, f, to, err, c.from, c.to)
		}
	}
	for in, want := range map[string]int64{"0": 0, "256MB": 256 << 20, "2gb": 2 << 30, "100": 100, "64KB": 64 << 10} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "-1MB", "1.5GB"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}
