package outfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func TestCommitAndDiscard(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	os.WriteFile(p, []byte("previous"), 0o640)
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	if b, _ := os.ReadFile(p); string(b) != "previous" {
		t.Fatalf("before Commit the file holds %q", b)
	}
	f.Discard()
	if b, _ := os.ReadFile(p); string(b) != "previous" {
		t.Fatalf("after Discard the file holds %q", b)
	}
	if err := WriteFile(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != "new" || fi.Mode().Perm() != 0o640 {
		t.Fatalf("after WriteFile: %q, mode %v (want the previous file's 0640)", b, fi.Mode())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}
	// A failing writer leaves the previous file.
	if err := WriteWith(p, func(w io.Writer) error { w.Write([]byte("x")); return errors.New("disk full") }); err == nil {
		t.Fatal("no error")
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Fatalf("after a failed write the file holds %q", b)
	}
}

// TestAttackConcurrentWriters (issue 31) writes one path from 8 writers at
// once, each in many small writes: the file is always one writer's whole
// output (two --trace runs interleaved their bytes before).
func TestAttackConcurrentWriters(t *testing.T) {
	p := filepath.Join(t.TempDir(), "trace.txt")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := Create(p)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Discard()
			for range 2000 {
				fmt.Fprintf(f, "writer %d\n", i)
			}
			if err := f.Commit(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	b, _ := os.ReadFile(p)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2000 {
		t.Fatalf("%d lines, want one writer's 2000", len(lines))
	}
	for _, l := range lines {
		if l != lines[0] {
			t.Fatalf("writers mixed: %q and %q", lines[0], l)
		}
	}
}

// TestInPlace: what a rename cannot replace is written where it is.
func TestInPlace(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	if err := WriteFile(fifo, []byte("through")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through" {
		t.Fatalf("the FIFO's reader got %q", s)
	}
	if fi, _ := os.Lstat(fifo); fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v", fi.Mode())
	}
	// A full device reports the error.
	if err := WriteFile("/dev/full", []byte("x")); err == nil {
		t.Fatal("/dev/full: no error")
	}
	// A link to a regular file: the link stays, the target is replaced.
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	if err := WriteFile(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced")
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Fatalf("target holds %q", b)
	}
}

func TestAttackNotInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.hcl")
	os.WriteFile(in, []byte("run {}"), 0o644)
	hard := filepath.Join(dir, "hard.hcl")
	os.Link(in, hard)
	t.Chdir(dir)
	for _, out := range []string{in, "x.hcl", "./x.hcl", "../" + filepath.Base(dir) + "/x.hcl", hard} {
		if err := NotInput("--trace", out, "other.hcl", "x.hcl"); err == nil || !strings.Contains(err.Error(), "--trace "+out+" is the input x.hcl") {
			t.Errorf("%s: err = %v", out, err)
		}
	}
	for _, out := range []string{"new.txt", "-", "", "/dev/null"} {
		if err := NotInput("--trace", out, "x.hcl", "/dev/null"); err != nil {
			t.Errorf("%s: %v", out, err)
		}
	}
}
