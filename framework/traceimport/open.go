package traceimport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tickemu/tickemu/framework/bundle"
)

// Detect picks the reader for r by its first non-blank line: babeltrace
// lines start with "[" and hold "] (" or ": { ", or (--names all) start
// with "timestamp = "; anything else is ftrace text.
// The returned reader reads r from its start.
func Detect(r io.Reader) Reader {
	br := bufio.NewReaderSize(r, 64<<10)
	peek, _ := br.Peek(16 << 10)
	if looksBabeltrace(string(peek)) {
		return NewBabeltrace(br)
	}
	return NewFtrace(br)
}

func looksBabeltrace(s string) bool {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if strings.HasPrefix(line, "timestamp = ") {
			return true
		}
		return line[0] == '[' && (strings.Contains(line, "] (") || strings.Contains(line, ": { "))
	}
	return false
}

// File is an opened capture.
type File struct {
	Reader
	// Manifest is the capture bundle's manifest (docs/capture.md), nil for
	// a plain trace file.
	Manifest *bundle.Manifest
	c        io.Closer
}

// Close closes the file.
func (f *File) Close() error { return f.c.Close() }

// Open opens a capture and detects its format: a capture bundle (`tickemu
// capture`'s .tcap, read by its gzip header whatever its name), whose trace
// entry is read, or a plain ftrace or babeltrace text file.
func Open(path string) (*File, error) {
	if bundle.Sniff(path) {
		b, err := bundle.Open(path)
		if err == nil {
			tr, err := b.Trace()
			if err != nil {
				return nil, err
			}
			return &File{Reader: Detect(tr), Manifest: &b.Manifest, c: tr}, nil
		}
		if !errors.Is(err, bundle.ErrNotBundle) {
			return nil, err
		}
		return nil, fmt.Errorf("%s is gzip-compressed but not a capture bundle (%v): decompress a compressed trace first", path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory (give babeltrace's text output, not the CTF trace directory)", path)
	}
	return &File{Reader: Detect(f), c: f}, nil
}
