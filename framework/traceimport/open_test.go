package traceimport

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tickemu/tickemu/framework/bundle"
)

// countEvents reads every event of a capture.
func countEvents(t *testing.T, r Reader) int {
	t.Helper()
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
}

// TestOpenBundle: Open reads a capture bundle's trace entry, whatever the
// file's name, and gives its manifest; the same events as the plain file.
func TestOpenBundle(t *testing.T) {
	plain := "testdata/tracefs-6x.txt"
	f, err := Open(plain)
	if err != nil {
		t.Fatal(err)
	}
	want := countEvents(t, f)
	f.Close()
	if f.Manifest != nil {
		t.Error("a plain trace has a manifest")
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "capture.bin") // the gzip header decides, not the name
	m := &bundle.Manifest{Name: "t", Command: []string{"sleep", "1"}, Start: time.Unix(1, 0).UTC(), Host: bundle.Host{HZ: 250, CPUs: 2}}
	if err := bundle.Write(path, m, []bundle.Entry{{Name: bundle.TraceName, Path: plain}, {Name: bundle.StdoutName}}); err != nil {
		t.Fatal(err)
	}
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Manifest == nil || b.Manifest.Host.HZ != 250 || b.Manifest.Name != "t" {
		t.Fatalf("manifest %+v", b.Manifest)
	}
	if got := countEvents(t, b); got != want || got == 0 {
		t.Errorf("%d events from the bundle, %d from the plain file", got, want)
	}
}

func TestOpenGzipNotBundle(t *testing.T) {
	raw, err := os.ReadFile("testdata/tracefs-6x.txt")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(raw)
	zw.Close()
	path := filepath.Join(t.TempDir(), "trace.txt.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "not a capture bundle") || !strings.Contains(err.Error(), "decompress") {
		t.Errorf("err = %v, want a message saying it is compressed but not a bundle", err)
	}
}
