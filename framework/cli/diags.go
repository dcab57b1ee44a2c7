package cli

import (
	"fmt"
	"io"
	"sync"

	"github.com/hashicorp/hcl/v2"

	"github.com/tickemu/tickemu/framework/config"
)

// diagPrinter prints a command's configuration diagnostics, warnings as well
// as errors, each distinct one once: a command loads the file once per
// variant, sweep point and seed, and configures the plugins once per run,
// and the same warning from each of them is one warning. Runs of compare
// report from their own goroutines, hence the lock.
type diagPrinter struct {
	mu   sync.Mutex
	w    io.Writer
	seen map[string]bool
	// clear, when set, erases a progress line before anything is printed.
	clear func()
}

func newDiagPrinter(w io.Writer) *diagPrinter {
	return &diagPrinter{w: w, seen: map[string]bool{}}
}

// write prints the diagnostics of diags not printed before, with their
// source snippets from files.
func (p *diagPrinter) write(diags hcl.Diagnostics, files map[string]*hcl.File) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var fresh hcl.Diagnostics
	for _, d := range diags {
		k := diagKey(d)
		if !p.seen[k] {
			p.seen[k] = true
			fresh = append(fresh, d)
		}
	}
	if len(fresh) == 0 {
		return
	}
	if p.clear != nil {
		p.clear()
	}
	config.WriteDiagnostics(p.w, fresh, files, false)
}

// setClear sets (or, with nil, removes) the function that erases a
// progress line.
func (p *diagPrinter) setClear(fn func()) {
	p.mu.Lock()
	p.clear = fn
	p.mu.Unlock()
}

func diagKey(d *hcl.Diagnostic) string {
	at := ""
	if d.Subject != nil {
		at = d.Subject.String()
	}
	return fmt.Sprintf("%d\x00%s\x00%s\x00%s", d.Severity, d.Summary, d.Detail, at)
}
