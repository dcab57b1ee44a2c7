// Package outfile writes tickemu's output files (traces, reports, profiles,
// bundles, the plugin lock) so that they never destroy an input and never
// mix:
//
//   - Create writes to a temporary file beside the destination and renames it
//     into place when the output is complete (Commit). A failure (a full
//     disk, a killed process) leaves the previous file intact, and two
//     writers of the same path each rename a whole file: the last one wins,
//     their bytes never interleave.
//   - NotInput refuses an output path that is one of the command's inputs,
//     compared as files (os.SameFile), not as strings, so ./x.hcl, x.hcl and
//     a hard link to it are all the same file.
//
// The temporary file and the rename are github.com/google/renameio/v2's: it
// fsyncs the file before the rename (without which ext4 may show a
// zero-length file after a crash), creates the file with the umask applied
// and keeps an existing file's permissions, which a hand-written
// CreateTemp+Rename got wrong (0600, or 0644 whatever the umask).
//
// What is not a regular file (a FIFO, /dev/null, /dev/full, a terminal,
// /dev/stdout) cannot be replaced by a rename: it is written in place, as
// before.
package outfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/renameio/v2"
)

// File is an output being written. Write to it, then Commit to put it in
// place, or Discard to drop it; Discard after Commit does nothing, so
// `defer f.Discard()` cleans up every early return.
type File struct {
	pending *renameio.PendingFile // nil when written in place
	direct  *os.File
	name    string
	done    bool
}

// Create starts the output file path.
func Create(path string) (*File, error) {
	target, inPlace, err := destination(path)
	if err != nil {
		return nil, err
	}
	if inPlace {
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return nil, err
		}
		return &File{direct: f, name: path}, nil
	}
	pf, err := renameio.NewPendingFile(target, renameio.WithTempDir(filepath.Dir(target)),
		renameio.WithPermissions(0o644), renameio.WithExistingPermissions())
	if err != nil {
		// Name the output, not the temporary file: "open DIR/F: no such file
		// or directory", as opening it in place said.
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = &os.PathError{Op: "open", Path: path, Err: pe.Err}
		}
		return nil, err
	}
	return &File{pending: pf, name: path}, nil
}

// destination resolves path to the file a rename replaces. A symbolic link
// is followed (the link stays, its target is replaced); a path that is, or
// leads to, something other than a regular file, or a file under /dev or
// /proc (/dev/stdout is a link to the descriptor's file), is written in
// place.
func destination(path string) (target string, inPlace bool, err error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return path, false, nil
	}
	if err != nil {
		return "", false, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		resolved, err := filepath.EvalSymlinks(path)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return path, true, nil // a dangling link: create its target
			}
			return "", false, err
		}
		fi, err = os.Stat(resolved)
		if err != nil {
			return "", false, err
		}
		if !fi.Mode().IsRegular() || special(resolved) || special(path) {
			return path, true, nil
		}
		return resolved, false, nil
	}
	if !fi.Mode().IsRegular() || special(path) {
		return path, true, nil
	}
	return path, false, nil
}

// special reports a path under /dev or /proc, whose files stand for
// descriptors and devices.
func special(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return true
	}
	return strings.HasPrefix(abs, "/dev/") || strings.HasPrefix(abs, "/proc/")
}

// Write implements io.Writer.
func (f *File) Write(p []byte) (int, error) {
	if f.pending != nil {
		return f.pending.Write(p)
	}
	return f.direct.Write(p)
}

// Name is the path the file was created for.
func (f *File) Name() string { return f.name }

// Commit completes the file: the temporary file is synced, closed and
// renamed over the destination.
func (f *File) Commit() error {
	if f.done {
		return errors.New("outfile: " + f.name + " committed or discarded already")
	}
	f.done = true
	if f.pending != nil {
		if err := f.pending.CloseAtomicallyReplace(); err != nil {
			f.pending.Cleanup()
			return err
		}
		return nil
	}
	return f.direct.Close()
}

// Discard drops the file: the temporary file is removed and the
// destination left as it was. It does nothing after Commit.
func (f *File) Discard() {
	if f.done {
		return
	}
	f.done = true
	if f.pending != nil {
		f.pending.Cleanup()
		return
	}
	f.direct.Close()
}

// WriteFile writes data to path as Create, Write and Commit do.
func WriteFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Discard()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}

// WriteWith writes path with write, committing it only if write succeeds.
func WriteWith(path string, write func(io.Writer) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Discard()
	if err := write(f); err != nil {
		return err
	}
	return f.Commit()
}

// NotInput returns an error if the output path names the same file as one
// of inputs (os.SameFile: the same device and inode, however the paths are
// spelt). flag names the output in the message (--trace). Paths that do
// not exist yet cannot be an input; standard output ("-") is none.
func NotInput(flag, out string, inputs ...string) error {
	if out == "" || out == "-" {
		return nil
	}
	ofi, err := os.Stat(out)
	if err != nil {
		return nil // not there yet: Create reports what is wrong with it
	}
	if !ofi.Mode().IsRegular() {
		return nil // a FIFO or device is written in place, never read back
	}
	for _, in := range inputs {
		if in == "" || in == "-" {
			continue
		}
		ifi, err := os.Stat(in)
		if err == nil && os.SameFile(ofi, ifi) {
			return fmt.Errorf("%s %s is the input %s: writing it would destroy the input (give another file)", flag, out, in)
		}
	}
	return nil
}
