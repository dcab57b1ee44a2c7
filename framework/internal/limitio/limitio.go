// Package limitio reads input through a size limit. Every file tickemu
// parses (a configuration, a machine profile, a shard file, a trace) is read
// through one, so an endless input (/dev/zero, a FIFO that never closes) or
// an oversized one fails as soon as it passes the limit, with an error
// naming the limit, instead of being read whole into memory first.
package limitio

import (
	"fmt"
	"io"
	"os"
)

// TooLargeError is an input that went past its limit.
type TooLargeError struct {
	// Name is the input (a path), What what it is ("a configuration file").
	Name, What string
	Limit      int64
}

func (e *TooLargeError) Error() string {
	if e.What == "" {
		return fmt.Sprintf("%s is larger than the %s limit", e.Name, Size(e.Limit))
	}
	return fmt.Sprintf("%s is larger than the %s limit for %s", e.Name, Size(e.Limit), e.What)
}

// Size writes a byte count the way limits are stated: 4 MiB, 16 GiB.
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Reader returns r as a reader that fails with a *TooLargeError once more
// than limit bytes were read from it.
func Reader(r io.Reader, limit int64, name, what string) io.Reader {
	return &reader{r: io.LimitReader(r, limit+1), left: limit, err: &TooLargeError{Name: name, What: what, Limit: limit}}
}

type reader struct {
	r    io.Reader
	left int64 // bytes that may still be returned
	err  error
}

func (l *reader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if int64(n) > l.left {
		// One byte past the limit: the input is too large, whatever follows.
		n = int(l.left)
		l.left = 0
		return n, l.err
	}
	l.left -= int64(n)
	return n, err
}

// ReadFile reads the file at path whole, failing with a *TooLargeError
// as soon as it holds more than limit bytes (without reading the rest).
func ReadFile(path string, limit int64, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(Reader(f, limit, path, what))
}
