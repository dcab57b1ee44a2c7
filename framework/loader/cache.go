package loader

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/tickemu/tickemu/framework/internal/outfile"
	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/shim"
)

// The description cache remembers what each plugin binary serves, so that a
// run resolves plugin names without starting binaries it does not need: a
// binary is started once to be described, and again only when it changes.
//
// One file per binary, under Options.CacheDir (the CLI uses
// os.UserCacheDir()/tickemu/plugins), named after a hash of the binary's
// absolute path. An entry is used only if the path, size, modification time
// and the host's protocol version all match, so a rebuilt binary is described
// afresh. Entries are written to a temporary file and renamed into place:
// concurrent runs read either the old entry or the new one, never half of
// one, and the last writer wins (both wrote the same answer). Only successful
// descriptions are stored; a binary that failed is tried again next time (a
// timeout may have been the machine's load, not the binary).
//
// The cache is an optimisation, never a source of truth about trust: the
// lock file's checksum (lock.go) is checked every time a binary is started.

// cacheFormat changes when cacheEntry changes shape.
const cacheFormat = 2 // 2: schema attributes carry their kernel eras (sdk.Attribute.Eras)

type cacheEntry struct {
	Format   int                `json:"format"`
	Protocol int                `json:"protocol"`
	Path     string             `json:"path"`
	Size     int64              `json:"size"`
	ModTime  int64              `json:"mtime_ns"`
	Plugins  []shim.Description `json:"plugins"`
}

// descCache is the description cache in dir; the zero value (dir "") is
// disabled.
type descCache struct{ dir string }

func (c descCache) file(abs string) string {
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(c.dir, hex.EncodeToString(sum[:12])+".json")
}

func (c descCache) matches(e cacheEntry, abs string, b binary) bool {
	return e.Format == cacheFormat && e.Protocol == sdk.ProtocolVersion && e.Path == abs &&
		e.Size == b.size && e.ModTime == b.mtime.UnixNano()
}

// get returns b's cached description, if there is a current one.
func (c descCache) get(b binary) ([]shim.Description, bool) {
	if c.dir == "" {
		return nil, false
	}
	abs, err := filepath.Abs(b.path)
	if err != nil {
		return nil, false
	}
	data, err := os.ReadFile(c.file(abs))
	if err != nil {
		return nil, false
	}
	var e cacheEntry
	if json.Unmarshal(data, &e) != nil || !c.matches(e, abs, b) {
		return nil, false
	}
	return e.Plugins, true
}

// put stores b's description. Errors are returned for logging only: a run
// does not fail because its cache directory is read-only.
func (c descCache) put(b binary, descs []shim.Description) error {
	if c.dir == "" {
		return nil
	}
	abs, err := filepath.Abs(b.path)
	if err != nil {
		return err
	}
	if descs == nil {
		descs = []shim.Description{}
	}
	data, err := json.Marshal(cacheEntry{Format: cacheFormat, Protocol: sdk.ProtocolVersion, Path: abs,
		Size: b.size, ModTime: b.mtime.UnixNano(), Plugins: descs})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	return outfile.WriteFile(c.file(abs), data)
}

// DefaultCacheDir returns os.UserCacheDir()/tickemu/plugins, or "" (no
// cache) when the user has no cache directory.
func DefaultCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "tickemu", "plugins")
}
