package loader

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/hashicorp/go-plugin"
	"github.com/tickemu/tickemu/framework/internal/outfile"
)

// A lock file pins the plugin binaries a project trusts: `tickemu plugins
// lock` records the SHA-256 of every plugin binary on the search path, and
// while a lock is in force tickemu starts only binaries whose contents match
// their entry (a binary not in the lock is refused too). The check is
// go-plugin's SecureConfig, made just before the process starts, for the
// description as well as for every run.

// LockEnv names the lock file when --plugin-lock is not given.
const LockEnv = "TICKEMU_PLUGIN_LOCK"

// DefaultLockFile is used when it exists in the working directory and
// neither --plugin-lock nor $TICKEMU_PLUGIN_LOCK names another. A lock can
// only refuse binaries, never add one, so reading it from an untrusted
// directory is harmless.
const DefaultLockFile = "tickemu-plugins.lock"

// lockFormat changes when the file changes shape.
const lockFormat = 1

// Lock is a parsed lock file.
type Lock struct {
	// File is where the lock was read from, for messages.
	File     string       `json:"-"`
	Format   int          `json:"format"`
	Comment  string       `json:"comment"`
	Binaries []LockedFile `json:"binaries"`
}

// LockedFile is one binary of a lock.
type LockedFile struct {
	// Path is absolute.
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	// Serves lists KIND/NAME of what the binary served when locked, for
	// the reader; it is not checked.
	Serves []string `json:"serves,omitempty"`
}

// ErrLocked: a plugin binary does not match the lock file.
var ErrLocked = errors.New("loader: plugin binary refused by the lock file")

// ReadLock reads the lock file at path.
func ReadLock(path string) (*Lock, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseLock(data, path)
}

// parseLock parses a lock file's contents; path is for messages.
func parseLock(data []byte, path string) (*Lock, error) {
	var l Lock
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("lock file %s: %w", path, err)
	}
	if l.Format != lockFormat {
		return nil, fmt.Errorf("lock file %s: format %d, this tickemu reads %d (run tickemu plugins lock again)", path, l.Format, lockFormat)
	}
	for i, b := range l.Binaries {
		if sum, err := hex.DecodeString(b.SHA256); err != nil || len(sum) != sha256.Size || !filepath.IsAbs(b.Path) {
			return nil, fmt.Errorf("lock file %s: entry %q: want an absolute path and a 64-digit hex SHA-256", path, b.Path)
		}
		// secure compares with filepath.Abs, which cleans: a hand-edited
		// "/opt/./p" must match the binary it names (FuzzParseLock found "/.").
		l.Binaries[i].Path = filepath.Clean(b.Path)
	}
	l.File = path
	return &l, nil
}

// Write writes l to path (replacing it in one rename).
func (l *Lock) Write(path string) error {
	l.Format = lockFormat
	l.Comment = "Plugin binaries trusted by this project; written by `tickemu plugins lock`, checked before each one starts."
	sort.Slice(l.Binaries, func(i, j int) bool { return l.Binaries[i].Path < l.Binaries[j].Path })
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	// Beside path, then renamed: two locks written at once never mix (the
	// fixed PATH.tmp they shared before did).
	return outfile.WriteFile(path, append(data, '\n'))
}

// secure returns the go-plugin SecureConfig for the binary at path, or an
// ErrLocked error if the lock has no entry for it.
func (l *Lock) secure(path string) (*plugin.SecureConfig, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	for _, b := range l.Binaries {
		if b.Path == abs {
			sum, _ := hex.DecodeString(b.SHA256) // checked by ReadLock
			return &plugin.SecureConfig{Checksum: sum, Hash: sha256.New()}, nil
		}
	}
	return nil, fmt.Errorf("%w: %s is not in %s (run `tickemu plugins lock` to trust it)", ErrLocked, abs, l.File)
}

// verify checks the binary at path against the lock.
func (l *Lock) verify(path string) error {
	sc, err := l.secure(path)
	if err != nil {
		return err
	}
	ok, err := sc.Check(path)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrLocked, path, err)
	}
	if !ok {
		got, _ := fileSHA256(path)
		return fmt.Errorf("%w: %s has SHA-256 %s, %s expects %x (rebuilt or replaced? run `tickemu plugins lock` again if you trust it)",
			ErrLocked, path, got, l.File, sc.Checksum)
	}
	return nil
}

// fileSHA256 returns the hex SHA-256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// NewLock describes every plugin binary on the catalog's search path and
// returns a lock of those that answered, with the problems of the others
// (not executable, no handshake): they are left out of the lock, so a run
// with it refuses them.
func (c *Catalog) NewLock() (*Lock, []error) {
	l := &Lock{}
	var errs []error
	for _, b := range c.binaries {
		if !b.runnable() {
			errs = append(errs, fmt.Errorf("%s %s", b.path, b.problem))
			continue
		}
		descs, err := c.describe(b)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		abs, err := filepath.Abs(b.path)
		if err == nil {
			var sum string
			if sum, err = fileSHA256(b.path); err == nil {
				lf := LockedFile{Path: abs, SHA256: sum}
				for _, d := range descs {
					lf.Serves = append(lf.Serves, string(d.Info.Kind)+"/"+d.Info.Name)
				}
				l.Binaries = append(l.Binaries, lf)
				continue
			}
		}
		errs = append(errs, fmt.Errorf("%s: %w", b.path, err))
	}
	return l, errs
}
