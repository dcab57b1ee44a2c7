package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/tickemu/tickemu/framework/internal/outfile"
)

// resultWriter is standard output as the commands see it: it keeps the first
// write error, and writes nothing after it, so that however a command writes
// (fmt.Fprintf that drops errors included) a closed or full standard output
// makes the exit status non-zero instead of 0 with nothing written.
type resultWriter struct {
	w   io.Writer
	err error
}

func (r *resultWriter) Write(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	r.err = err
	return n, err
}

// finish turns a write error the command did not report into exit status 1.
func (r *resultWriter) finish(status int, stderr io.Writer) int {
	if r.err == nil || status != 0 {
		return status
	}
	fmt.Fprintf(stderr, "tickemu: cannot write to standard output: %v\n", r.err)
	return 1
}

// errStdoutClosed is reported when tickemu starts without a standard output.
var errStdoutClosed = errors.New("standard output is closed: the results would be lost (redirect it to a file, or to /dev/null to drop them)")

// checkStdout fails when tickemu was started with descriptor 1 closed. The Go
// runtime opens /dev/null (read-write) in the place of a closed standard
// descriptor before main runs, so writes would succeed and every result
// would vanish with exit status 0; a shell's >/dev/null opens it write-only,
// which passes.
func checkStdout(stdout *os.File) error {
	if closedStdout(stdout) {
		return errStdoutClosed
	}
	return nil
}

// outputsAreNotInputs refuses, with a message and false, an output file
// that is one of the command's input files (the same file, however its
// path is spelt: `run X.hcl --report ./X.hcl` overwrote the configuration).
// outputs pairs each flag with its value; an empty value is no output.
func outputsAreNotInputs(stderr io.Writer, inputs []string, outputs ...[2]string) bool {
	for _, o := range outputs {
		if err := outfile.NotInput(o[0], o[1], inputs...); err != nil {
			fmt.Fprintf(stderr, "tickemu: %v\n", err)
			return false
		}
	}
	return true
}
