package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/tickemu/tickemu/framework/loader"
	"github.com/tickemu/tickemu/framework/sdk"
)

// wantsHelp reports whether args ask for help (-h, -help or --help before
// any "--"); if so it prints the command's usage, what it does and its flags
// to stdout: asking for help is not a usage error (exit 0).
func wantsHelp(fs *flag.FlagSet, usage, what string, args []string, stdout io.Writer) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprintf(stdout, "usage: %s\n\n%s\n\nflags:\n", usage, what)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return true
		}
	}
	return false
}

// attrJSON is one schema attribute as `plugins --format json` and
// `workloads --format json` list it.
type attrJSON struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Required bool     `json:"required,omitempty"`
	Default  *string  `json:"default"`
	OneOf    []string `json:"one_of,omitempty"`
	Doc      string   `json:"doc"`
	// Eras and Unversioned: the attribute's value per kernel release, or
	// why it has none (docs/kernel-changes.md).
	Eras        []eraJSON `json:"eras,omitempty"`
	Unversioned string    `json:"unversioned,omitempty"`
}

type eraJSON struct {
	Since  string `json:"since"`
	Value  string `json:"value"`
	Commit string `json:"commit,omitempty"`
	Title  string `json:"title,omitempty"`
	Note   string `json:"note,omitempty"`
	// Backports: the stable point releases that carry the change
	// (sdk.Era.Backports).
	Backports string `json:"backports,omitempty"`
}

func attrsJSON(s sdk.Schema) []attrJSON {
	out := []attrJSON{}
	for _, a := range s.Attributes {
		j := attrJSON{Name: a.Name, Type: string(a.Type), Required: a.Required, OneOf: a.OneOf, Doc: a.Doc, Unversioned: a.Unversioned}
		for _, e := range a.Eras {
			j.Eras = append(j.Eras, eraJSON(e))
		}
		if !a.Required {
			d := a.Default
			j.Default = &d
		}
		out = append(out, j)
	}
	return out
}

type pluginJSON struct {
	Kind        string     `json:"kind,omitempty"`
	Name        string     `json:"name"`
	Version     string     `json:"version,omitempty"`
	Description string     `json:"description,omitempty"`
	Source      string     `json:"source"`
	Module      string     `json:"module,omitempty"`
	Shadowed    bool       `json:"shadowed,omitempty"`
	Error       string     `json:"error,omitempty"`
	Attributes  []attrJSON `json:"attributes"`
}

// writePluginsJSON lists the catalog's plugins as a JSON array.
func writePluginsJSON(stdout, stderr io.Writer, entries []loader.Entry) int {
	out := []pluginJSON{}
	for _, e := range entries {
		p := pluginJSON{Kind: string(e.Kind), Name: e.Name, Version: e.Version, Description: e.Description,
			Source: e.Source, Shadowed: e.Shadowed, Attributes: attrsJSON(e.Schema)}
		if e.Module != nil {
			p.Module = e.Module.String()
		}
		if e.Err != nil {
			p.Error = e.Err.Error()
		}
		out = append(out, p)
	}
	return writeJSON(stdout, stderr, out)
}

func writeJSON(stdout, stderr io.Writer, v any) int {
	b, err := json.MarshalIndent(v, "", "  ")
	if err == nil {
		_, err = stdout.Write(append(b, '\n'))
	}
	if err != nil {
		fmt.Fprintf(stderr, "tickemu: %v\n", err)
		return 1
	}
	return 0
}
