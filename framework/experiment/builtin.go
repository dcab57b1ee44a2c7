package experiment

import (
	"fmt"
	"sort"

	"github.com/tickemu/tickemu/framework/sdk"
)

// InProcess is an Opener over builtin factories only, linked in process. The
// CLI uses framework/loader, which adds out-of-process isolation and external
// binaries; tests and embedders can use this directly. A Vetted factory's
// plugin runs without the contract checker (see vetted).
type InProcess []sdk.Factory

type inproc struct {
	p      sdk.Plugin
	name   string
	vetted bool
}

func (i inproc) Plugin() sdk.Plugin { return i.p }
func (i inproc) Describe() string   { return i.name + " (in process)" }
func (i inproc) Kill()              {}
func (i inproc) Vetted() bool       { return i.vetted }

func (f InProcess) find(kind sdk.Kind, name string) (sdk.Factory, error) {
	var known []string
	for _, x := range f {
		if x.Kind == kind {
			if x.Name == name {
				return x, nil
			}
			known = append(known, x.Name)
		}
	}
	sort.Strings(known)
	return sdk.Factory{}, notFoundError{fmt.Errorf("no %s plugin named %q (available: %v)", kind, name, known)}
}

// Describe implements Opener.
func (f InProcess) Describe(kind sdk.Kind, name string) (sdk.Info, sdk.Schema, error) {
	x, err := f.find(kind, name)
	if err != nil {
		return sdk.Info{}, sdk.Schema{}, err
	}
	p := x.New()
	return p.Info(), p.Schema(), nil
}

// Open implements Opener; isolation other than in-process is refused.
func (f InProcess) Open(kind sdk.Kind, name, isolation string) (Instance, error) {
	if isolation != "" && isolation != "inprocess" {
		return nil, fmt.Errorf("isolation %q needs the plugin loader", isolation)
	}
	x, err := f.find(kind, name)
	if err != nil {
		return nil, err
	}
	return inproc{p: x.New(), name: name, vetted: x.Vetted}, nil
}

// Names implements Lister.
func (f InProcess) Names(kind sdk.Kind) []string {
	var out []string
	for _, x := range f {
		if x.Kind == kind {
			out = append(out, x.Name)
		}
	}
	return out
}

// notFoundError marks "no plugin has the name" for describeSummary.
type notFoundError struct{ error }

func (notFoundError) PluginNotFound() bool { return true }
