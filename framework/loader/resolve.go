package loader

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rs/zerolog"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/shim"
)

// The resolution rule: which plugin KIND/NAME means. `tickemu plugins`,
// validate, run and compare all go through lookup, so they cannot disagree.
//
//  1. A plugin reattached with --plugin-reattach (or $TICKEMU_REATTACH_PLUGINS)
//     under that KIND/NAME: the author asked for exactly that process.
//  2. A plugin linked into tickemu (a builtin, or one added by tickemu build
//     --with).
//  3. A file tickemu-plugin-NAME that serves KIND/NAME, the first in
//     directory order. If one does not answer the handshake, that is the
//     error: the rule does not fall through to a file that happens to work.
//  4. Any other plugin binary that serves KIND/NAME (a binary may serve
//     several plugins), in search order: directory by directory, by file
//     name within one.
//
// Files that cannot be run (not executable, not regular files) are skipped
// with a warning when the catalog is made. Each source that rule 1-4 passes
// over for a KIND/NAME it does serve is shadowed, and named in a warning;
// only sources known without starting a process are checked (linked-in
// plugins, same-named files, binaries whose description is in memory or in
// the description cache), so resolving one name starts at most the binaries
// tried before the winner, usually just tickemu-plugin-NAME. `tickemu
// plugins` describes everything, so its warnings are complete.

// found is where a plugin comes from.
type found struct {
	reattach *shim.ReattachAddr
	builtin  *sdk.Factory
	bin      binary
	desc     shim.Description // for a binary or a reattached plugin
}

func (f found) source() string {
	switch {
	case f.reattach != nil:
		return fmt.Sprintf("%s (pid %d)", SourceReattached, f.reattach.Pid)
	case f.builtin != nil:
		return linkedSource(*f.builtin)
	}
	return f.bin.path
}

// order returns the runnable binaries in the order rule 3 and 4 try them for
// name.
func (c *Catalog) order(name string) []binary {
	var named, others []binary
	for _, b := range c.binaries {
		switch {
		case !b.runnable():
		case b.name == name:
			named = append(named, b)
		default:
			others = append(others, b)
		}
	}
	return append(named, others...)
}

// lookup resolves kind/name by the rule above, once per catalog for a name
// that resolves (its answer cannot change while the catalog lives: the path
// was scanned once, and a description once known is kept).
func (c *Catalog) lookup(kind sdk.Kind, name string) (found, error) {
	if !isKind(kind) {
		return found{}, fmt.Errorf("%w %q (kinds: %s)", ErrUnknownKind, kind, kindList())
	}
	k := key{kind, name}
	c.mu.Lock()
	f, ok := c.resolved[k]
	c.mu.Unlock()
	if ok {
		return f, nil
	}
	f, err := c.resolve(k)
	if err == nil {
		c.mu.Lock()
		c.resolved[k] = f
		c.mu.Unlock()
	}
	return f, err
}

// resolve applies the rule to k.
func (c *Catalog) resolve(k key) (found, error) {
	kind, name := k.kind, k.name
	if a, ok := c.reattach[k.String()]; ok {
		f, err := c.describeReattached(k, a)
		if err == nil {
			c.warnShadowed(k, f, c.binaries)
		}
		return f, err
	}
	if b, ok := c.builtins[k]; ok {
		f := found{builtin: &b}
		c.warnShadowed(k, f, c.binaries)
		return f, nil
	}
	order := c.order(name)
	for i, b := range order {
		descs, err := c.describe(b)
		if err != nil {
			if b.name == name {
				return found{}, fmt.Errorf("%s plugin %q: %w", kind, name, err)
			}
			continue
		}
		if d, ok := serves(descs, k); ok {
			f := found{bin: b, desc: d}
			c.warnShadowed(k, f, order[i+1:])
			return f, nil
		}
	}
	return found{}, fmt.Errorf("%w: no %s plugin %q (available: %s)%s", ErrNotFound, kind, name, c.available(kind), c.pathHint())
}

func serves(descs []shim.Description, k key) (shim.Description, bool) {
	for _, d := range descs {
		if d.Info.Kind == k.kind && d.Info.Name == k.name {
			return d, true
		}
	}
	return shim.Description{}, false
}

// warnShadowed warns once about every source among rest (and the linked-in
// plugin, when a reattached one wins) that serves k but loses to winner.
func (c *Catalog) warnShadowed(k key, winner found, rest []binary) {
	var lost []string
	if winner.reattach != nil {
		if f, ok := c.builtins[k]; ok {
			lost = append(lost, linkedSource(f))
		}
	}
	for _, b := range rest {
		if !b.runnable() || b.path == winner.bin.path {
			continue
		}
		if descs, ok := c.known(b); ok {
			if _, s := serves(descs, k); s {
				lost = append(lost, b.path)
			}
		} else if b.name == k.name {
			lost = append(lost, b.path) // named after it; not started to make sure
		}
	}
	if len(lost) == 0 {
		return
	}
	c.warnOnce("shadow "+k.String(), func(e *zerolog.Event) {
		e.Str("plugin", k.String()).Str("using", winner.source()).Strs("shadowed", lost).
			Msgf("%s plugin %q is served by %s; shadowed and not used: %s", k.kind, k.name, winner.source(), strings.Join(lost, ", "))
	})
}

// available lists the plugins of kind known without starting anything, for
// errors.
func (c *Catalog) available(kind sdk.Kind) string {
	var s []string
	for k, f := range c.builtins {
		if k.kind == kind {
			s = append(s, k.name+" ("+linkedSource(f)+")")
		}
	}
	for _, b := range c.binaries {
		if descs, ok := c.known(b); ok {
			for _, d := range descs {
				if d.Info.Kind == kind {
					s = append(s, fmt.Sprintf("%s (%s)", d.Info.Name, b.path))
				}
			}
		}
	}
	if len(s) == 0 {
		return "none"
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

// pathHint tells where binaries were looked for.
func (c *Catalog) pathHint() string {
	if len(c.opts.Path) == 0 {
		return "; no plugin directory is searched (--plugin-dir DIR or $" + PathEnv + "; the working directory's ./plugins only when named)"
	}
	return "; plugin directories searched: " + strings.Join(c.opts.Path, ", ")
}
