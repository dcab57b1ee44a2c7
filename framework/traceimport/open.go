package traceimport

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
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
	f *os.File
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Open opens a capture file and detects its format.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory (give babeltrace's text output, not the CTF trace directory)", path)
	}
	return &File{Reader: Detect(f), f: f}, nil
}
