package loader

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// BinaryPrefix starts the file name of every plugin binary: a plugin called
// NAME is found as tickemu-plugin-NAME (tickemu-plugin-NAME.exe on Windows).
const BinaryPrefix = "tickemu-plugin-"

// PathEnv is the environment variable holding extra plugin directories.
const PathEnv = "TICKEMU_PLUGIN_PATH"

// DefaultDir is searched last, relative to the working directory.
const DefaultDir = "plugins"

// SearchPath returns the plugin search path, in order: the directories of
// flag (the --plugin-dir value), those of $TICKEMU_PLUGIN_PATH, then
// ./plugins. Lists are split with filepath.SplitList (":" on Unix); empty
// entries are dropped, and so are repeats.
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
	add(DefaultDir)
	return out
}

// binary is a plugin executable found on the search path.
type binary struct {
	name string // NAME of tickemu-plugin-NAME
	path string
}

// scan finds the plugin binaries in dirs. The first directory holding a
// given NAME wins, as in $PATH; missing directories are skipped. Only regular
// files (or links to them) with an execute bit count.
func scan(dirs []string) []binary {
	var out []binary
	seen := make(map[string]bool)
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir) // sorted by name
		if err != nil {
			continue
		}
		for _, e := range entries {
			name, ok := pluginName(e.Name())
			if !ok || seen[name] {
				continue
			}
			path := filepath.Join(dir, e.Name())
			fi, err := os.Stat(path)
			if err != nil || !fi.Mode().IsRegular() || (runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0) {
				continue
			}
			seen[name] = true
			out = append(out, binary{name: name, path: path})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
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
