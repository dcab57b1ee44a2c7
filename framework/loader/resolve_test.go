//go:build unix

package loader_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tickemu/tickemu/framework/loader"
	"github.com/tickemu/tickemu/framework/sdk"
)

// TestListAndOpenAgree: for every layout of builtins and binaries, each
// plugin `tickemu plugins` lists has exactly one entry that is not shadowed,
// and it is the source Describe, Source and Open use (the issue: List
// followed the search path while lookup tried the binary named after the
// plugin first).
func TestListAndOpenAgree(t *testing.T) {
	type layout struct {
		name     string
		builtins []sdk.Factory
		files    map[string]string // "DIR/NAME" -> "" for a link to the test binary
		want     map[string]string // "KIND/NAME" -> winning source, relative to the root
	}
	echo := testFactories()[:1]
	tests := []layout{
		{"first directory wins", []sdk.Factory{}, map[string]string{"a/echo": "", "b/echo": ""},
			map[string]string{"clockevent/echo": "a/tickemu-plugin-echo", "wheel/tb": "a/tickemu-plugin-echo", "hrtimer/hr": "a/tickemu-plugin-echo"}},
		{"named file beats an earlier binary serving it", []sdk.Factory{}, map[string]string{"a/multi": "", "b/tb": ""},
			map[string]string{"wheel/tb": "b/tickemu-plugin-tb", "clockevent/echo": "a/tickemu-plugin-multi", "hrtimer/hr": "a/tickemu-plugin-multi"}},
		{"linked-in beats every binary", echo, map[string]string{"a/echo": "", "b/zz": ""},
			map[string]string{"clockevent/echo": loader.SourceBuiltin, "wheel/tb": "a/tickemu-plugin-echo", "hrtimer/hr": "a/tickemu-plugin-echo"}},
		{"file order within a directory", []sdk.Factory{}, map[string]string{"a/zz": "", "a/mm": ""},
			map[string]string{"clockevent/echo": "a/tickemu-plugin-mm", "wheel/tb": "a/tickemu-plugin-mm"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, d := range []string{"a", "b"} {
				if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for f := range tt.files {
				dir, name, _ := strings.Cut(f, "/")
				linkBinary(t, filepath.Join(root, dir), name)
			}
			rel := func(src string) string {
				if r, err := filepath.Rel(root, src); err == nil && !strings.HasPrefix(r, "..") {
					return r
				}
				return src
			}
			c, logs := newCatalog(t, loader.Options{Builtins: tt.builtins, Path: []string{filepath.Join(root, "a"), filepath.Join(root, "b")}})
			winners := map[string][]string{}
			shadowed := map[string]int{}
			for _, e := range c.List() {
				if e.Err != nil {
					t.Fatalf("List: %s: %v", e.Source, e.Err)
				}
				k := string(e.Kind) + "/" + e.Name
				if e.Shadowed {
					shadowed[k]++
				} else {
					winners[k] = append(winners[k], rel(e.Source))
				}
			}
			for k, want := range tt.want {
				if got := winners[k]; len(got) != 1 || got[0] != want {
					t.Errorf("List: %s served by %v (not shadowed), want exactly %s", k, got, want)
				}
				kind, name, _ := strings.Cut(k, "/")
				src, err := c.Source(sdk.Kind(kind), name)
				if err != nil || rel(src) != want {
					t.Errorf("Source(%s) = %s, %v; want %s", k, rel(src), err, want)
				}
				inst := open(t, c, sdk.Kind(kind), name, loader.Default)
				if rel(inst.Source()) != want {
					t.Errorf("Open(%s).Source() = %s, want %s", k, rel(inst.Source()), want)
				}
				if shadowed[k] > 0 && !strings.Contains(logs.String(), fmt.Sprintf(`%s plugin \"%s\" is served by %s; shadowed and not used: `, kind, name, inst.Source())) {
					t.Errorf("%s has %d shadowed sources but no warning names them:\n%s", k, shadowed[k], logs.String())
				}
			}
		})
	}
}

// countingPlugin writes a plugin binary that records each start in
// dir/starts and then is the test binary.
func countingPlugin(t *testing.T, dir, name string) (path string, starts func() int) {
	t.Helper()
	count := filepath.Join(dir, "starts")
	path = writeScript(t, dir, name, fmt.Sprintf("echo x >> %q\nexec %q \"$@\"\n", count, self(t)))
	return path, func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "x")
	}
}

// TestDescriptionCache: a binary is started once to be described; later
// catalogs (later runs) resolve it from the cache without starting it, until
// the binary changes.
func TestDescriptionCache(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	path, starts := countingPlugin(t, dir, "echo")
	cat := func() *loader.Catalog {
		c, _ := newCatalog(t, loader.Options{Builtins: []sdk.Factory{}, Path: []string{dir}, CacheDir: cache})
		return c
	}
	if _, _, err := cat().Describe(sdk.KindTimerBase, "tb"); err != nil {
		t.Fatal(err)
	}
	if n := starts(); n != 1 {
		t.Fatalf("first Describe started the binary %d times, want 1", n)
	}
	c := cat()
	info, _, err := c.Describe(sdk.KindHRTimer, "hr")
	if err != nil || info.Name != "hr" {
		t.Fatalf("Describe(hr) from the cache = %+v, %v", info, err)
	}
	if names := c.Names(sdk.KindClockEvent); strings.Join(names, ",") != "echo" {
		t.Errorf("Names(clockevent) = %v, want [echo] from the cache", names)
	}
	if n := starts(); n != 1 {
		t.Errorf("a second catalog started the binary (%d starts), want it described from the cache", n)
	}
	// A changed binary (here: a new modification time) is described again.
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cat().Describe(sdk.KindTimerBase, "tb"); err != nil {
		t.Fatal(err)
	}
	if n := starts(); n != 2 {
		t.Errorf("after the binary changed: %d starts, want 2", n)
	}
	// Concurrent runs describing a changed binary all write the cache at
	// once: each gets its answer, and one whole entry is left.
	later = later.Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := cat().Describe(sdk.KindClockEvent, "echo")
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Describe: %v", err)
		}
	}
	if ents, _ := filepath.Glob(filepath.Join(cache, "*")); len(ents) != 1 {
		t.Errorf("cache holds %v, want one entry (no temporary files left)", ents)
	}
	before := starts()
	if _, _, err := cat().Describe(sdk.KindClockEvent, "echo"); err != nil || starts() != before {
		t.Errorf("after the concurrent writes: Describe = %v, %d more starts; want a cache hit", err, starts()-before)
	}
}

// TestDescribeKillsForkedChildren: describing a binary that never answers
// and forks a child holding its stdout ends at the describe timeout, with
// the child killed (it would otherwise keep the run waiting on the pipe).
func TestDescribeKillsForkedChildren(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	writeScript(t, dir, "forks", fmt.Sprintf("sleep 60 &\necho $! > %q\nexec sleep 60\n", pidFile))
	c, _ := newCatalog(t, loader.Options{Builtins: []sdk.Factory{}, Path: []string{dir}, DescribeTimeout: 300 * time.Millisecond})
	start := time.Now()
	_, _, err := c.Describe(sdk.KindClockEvent, "forks")
	if err == nil || !strings.Contains(err.Error(), "no go-plugin handshake on stdout within 300ms") {
		t.Errorf("Describe(forks) = %v, want the describe timeout", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Describe(forks) returned after %v", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var child int
	fmt.Sscan(string(b), &child)
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(child, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the forked child %d outlived the describe", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSocketDirIsPrivate: even with umask 000, a plugin's socket lives in a
// directory only its owner can enter (go-plugin's per-plugin 0700 directory,
// which the loader's runner asks for).
func TestSocketDirIsPrivate(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	c, _ := newCatalog(t, loader.Options{})
	open(t, c, sdk.KindClockEvent, "echo", loader.Process)
	socks, _ := filepath.Glob(filepath.Join(tmp, "plugin-dir*", "plugin*"))
	if len(socks) != 1 {
		ents, _ := filepath.Glob(filepath.Join(tmp, "*", "*"))
		sort.Strings(ents)
		t.Fatalf("sockets under TMPDIR: %v (all: %v), want one in a plugin-dir", socks, ents)
	}
	fi, err := os.Stat(filepath.Dir(socks[0]))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("socket directory %s has mode %v, want 0700", filepath.Dir(socks[0]), fi.Mode().Perm())
	}
}
