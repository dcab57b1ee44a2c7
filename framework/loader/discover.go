package loader

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// BinaryPrefix starts the file name of every plugin binary: a plugin called
// NAME is found as tickemu-plugin-NAME (tickemu-plugin-NAME.exe on Windows).
const BinaryPrefix = "tickemu-plugin-"

// PathEnv is the environment variable holding extra plugin directories.
const PathEnv = "TICKEMU_PLUGIN_PATH"

// SearchPath returns the plugin search path, in order: the directories of
// flag (the --plugin-dir value), then those of $TICKEMU_PLUGIN_PATH. Lists
// are split with filepath.SplitList (":" on Unix); empty entries are dropped,
// and so are repeats.
//
// The working directory is not searched unless one of the two names it
// (`--plugin-dir ./plugins`): tickemu run inside a checkout someone else
// wrote must not execute the binaries that checkout ships.
func SearchPath(flag string, getenv func(string) string) []string {
	var out []string
	seen := make(map[string]bool)
	add := func(list string) {
		for _, d := range filepath.SplitList(list) {
			if d == "" || seen[d] {
				continue
			}
			seen[d] = true
			out = append(out, d)
		}
	}
	add(flag)
	add(getenv(PathEnv))
	return out
}

// binary is a tickemu-plugin-NAME file found on the search path.
type binary struct {
	name string // NAME of tickemu-plugin-NAME
	path string
	dir  int // index of its directory on the search path
	// size and mtime key the description cache (cache.go).
	size  int64
	mtime time.Time
	// problem says why the file cannot be a plugin (not executable, a
	// directory, a dangling link); "" if it can be started.
	problem string
}

// runnable reports whether b can be started.
func (b binary) runnable() bool { return b.problem == "" }

// scan finds every tickemu-plugin-NAME entry in dirs, in search order:
// directory by directory, and by file name within one (os.ReadDir sorts).
// Missing directories are skipped. Entries that cannot be run are kept with
// their problem, so that the catalog can warn about them instead of
// ignoring them silently; so are same-named files in later directories
// (resolve.go decides which one serves a name, and warns about the others).
func scan(dirs []string) []binary {
	var out []binary
	for i, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name, ok := pluginName(e.Name())
			if !ok {
				continue
			}
			b := binary{name: name, path: filepath.Join(dir, e.Name()), dir: i}
			fi, err := os.Stat(b.path)
			switch {
			case err != nil:
				b.problem = fmt.Sprintf("cannot be read: %v", err)
			case !fi.Mode().IsRegular():
				b.problem = fmt.Sprintf("is not a regular file (%s)", fi.Mode().Type())
			case runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0:
				b.problem = fmt.Sprintf("is not executable (mode %s; chmod +x it, or remove it)", fi.Mode().Perm())
			default:
				b.size, b.mtime = fi.Size(), fi.ModTime()
			}
			out = append(out, b)
		}
	}
	return out
}

// pluginName returns NAME for a file called tickemu-plugin-NAME.
func pluginName(file string) (string, bool) {
	if runtime.GOOS == "windows" {
		file = strings.TrimSuffix(file, ".exe")
	}
	name, ok := strings.CutPrefix(file, BinaryPrefix)
	return name, ok && name != ""
}
