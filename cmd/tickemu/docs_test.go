package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tickemu/tickemu/framework/sdk"
)

// walkThrough is the docs/plugins.md section TestPluginsDoc runs.
const walkThrough = "## From an empty directory to an A/B comparison"

// docBlock is one fenced code block of the walk-through.
type docBlock struct {
	lang, file string // file is set for ```go file=NAME blocks
	text       string
	line       int
}

// parseDoc returns the fenced blocks of the section titled title.
func parseDoc(src, title string) ([]docBlock, error) {
	var blocks []docBlock
	in, found := false, false
	var cur *docBlock
	sc := bufio.NewScanner(strings.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur != nil && line == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		case strings.HasPrefix(line, "## "):
			in = line == title
			found = found || in
		case in && strings.HasPrefix(line, "```"):
			f := strings.Fields(strings.TrimPrefix(line, "```"))
			b := docBlock{line: n}
			if len(f) > 0 {
				b.lang = f[0]
			}
			for _, a := range f[1:] {
				if name, ok := strings.CutPrefix(a, "file="); ok {
					b.file = name
				}
			}
			cur = &b
		}
	}
	if !found {
		return nil, fmt.Errorf("no section %q", title)
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: unterminated code block", cur.line)
	}
	return blocks, nil
}

// docScript turns the walk-through into a testscript: one bash script that
// writes every file block where the reader would and runs every sh block in
// order (each block's output saved), then a grep for every line of each text
// block against the output of the sh block before it.
func docScript(blocks []docBlock) (string, error) {
	var sh, checks strings.Builder
	sh.WriteString("set -euo pipefail\nmkdir -p \"$DOCOUT\"\n")
	n := 0
	for _, b := range blocks {
		switch {
		case b.file != "":
			fmt.Fprintf(&sh, "cat > %s <<'TICKEMU_DOC_EOF'\n%sTICKEMU_DOC_EOF\n", b.file, b.text)
		case b.lang == "sh":
			n++
			fmt.Fprintf(&sh, "echo '# docs/plugins.md:%d' >&2\n{\n%s} > \"$DOCOUT/out.%d\" 2>&1 || { cat \"$DOCOUT/out.%d\" >&2; exit 1; }\n", b.line, b.text, n, n)
		case b.lang == "text":
			if n == 0 {
				return "", fmt.Errorf("line %d: output block before any command", b.line)
			}
			for _, l := range strings.Split(strings.TrimRight(b.text, "\n"), "\n") {
				fmt.Fprintf(&checks, "grep %s $WORK/.doc/out.%d\n", quoteScript(regexp.QuoteMeta(l)), n)
			}
		default:
			return "", fmt.Errorf("line %d: a %q block is neither a file, a command nor output", b.line, b.lang)
		}
	}
	if n == 0 {
		return "", fmt.Errorf("no commands")
	}
	return "env DOCOUT=$WORK/.doc\nexec bash $WORK/walkthrough.sh\n" + checks.String() +
		"-- walkthrough.sh --\n" + sh.String(), nil
}

// quoteScript quotes s for a testscript argument.
func quoteScript(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// TestPluginsDoc runs docs/plugins.md's walk-through as written: a plugin
// module from an empty directory, its tests, tickemu build --with, the
// listing, in and out of process, and the A/B comparison. The go command
// fetches the module's requirements through the configured proxy the first
// time (go mod tidy), as it would for the reader.
func TestPluginsDoc(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "docs", "plugins.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseDoc(string(src), walkThrough)
	if err != nil {
		t.Fatalf("docs/plugins.md: %v", err)
	}
	script, err := docScript(blocks)
	if err != nil {
		t.Fatalf("docs/plugins.md: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "walkthrough.txtar"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: dir,
		Setup: func(env *testscript.Env) error {
			for k, v := range goEnv(t) {
				env.Setenv(k, v)
			}
			env.Setenv("TICKEMU", root)
			return nil
		},
	})
}

func TestParseDoc(t *testing.T) {
	src := "# T\n\n## Other\n```sh\nnot this\n```\n## Walk\ntext\n```sh\ncd x\n```\n```go file=a.go\npackage a\n```\n```text\nout\n```\n## Next\n```sh\nnor this\n```\n"
	blocks, err := parseDoc(src, "## Walk")
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 3 || blocks[0].text != "cd x\n" || blocks[1].file != "a.go" || blocks[2].lang != "text" {
		t.Fatalf("blocks = %+v", blocks)
	}
	script, err := docScript(blocks)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"grep 'out' $WORK/.doc/out.1", "cat > a.go <<'TICKEMU_DOC_EOF'\npackage a\nTICKEMU_DOC_EOF", "{\ncd x\n}"} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
	if _, err := parseDoc(src, "## Missing"); err == nil {
		t.Error("a missing section parsed")
	}
	if _, err := docScript([]docBlock{{lang: "python", line: 3}}); err == nil {
		t.Error("an unknown block kind was accepted")
	}
}

// TestPluginsDocCommandsTested: outside the walk-through (which
// TestPluginsDoc runs), every command line in a code block of
// docs/plugins.md has a testscript that runs the same command with the same
// flags, and every variable it exports is set by one.
func TestPluginsDocCommandsTested(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "docs", "plugins.md"))
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := filepath.Glob(filepath.Join("testdata", "script", "*.txtar"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no testscripts: %v", err)
	}
	var corpus []string
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		corpus = append(corpus, strings.Split(string(b), "\n")...)
	}
	cmds := docCommands(string(src), walkThrough)
	if len(cmds) == 0 {
		t.Fatal("found no commands in docs/plugins.md")
	}
	for _, c := range cmds {
		t.Logf("docs/plugins.md:%d: %s %v%s", c.line, c.prog, c.flags, c.exportedVar)
		if !slices.ContainsFunc(corpus, c.matches) {
			t.Errorf("docs/plugins.md:%d: %q: no testscript runs %q with %v", c.line, c.text, c.prog, c.flags)
		}
	}
}

// docCommand is a command line of the doc: the program (with its
// subcommands) and its flags.
type docCommand struct {
	line        int
	text, prog  string
	flags       []string
	exportedVar string
}

func (c docCommand) matches(script string) bool {
	if c.exportedVar != "" {
		return strings.Contains(script, c.exportedVar)
	}
	if !strings.Contains(script, c.prog) {
		return false
	}
	for _, f := range c.flags {
		if !strings.Contains(script, f) {
			return false
		}
	}
	return true
}

// docCommands lists the command lines of the code blocks outside section
// skip: tickemu invocations, plugin binaries (also under dlv exec) and
// exported variables. Output lines are not commands.
func docCommands(src, skip string) []docCommand {
	var out []docCommand
	in, skipping := false, false
	sc := bufio.NewScanner(strings.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "## ") && !in:
			skipping = line == skip
			continue
		case strings.HasPrefix(trimmed, "```"):
			in = !in
			continue
		case !in || skipping:
			continue
		}
		text, _, _ := strings.Cut(strings.TrimPrefix(trimmed, "$ "), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if f[0] == "export" && len(f) > 1 {
			name, _, _ := strings.Cut(f[1], "=")
			out = append(out, docCommand{line: n, text: text, exportedVar: name})
			continue
		}
		if f[0] == "dlv" && len(f) > 3 && f[1] == "exec" && f[3] == "--" {
			f = append([]string{f[2]}, f[4:]...)
		}
		prog := filepath.Base(f[0])
		switch {
		case prog == "tickemu":
			// The subcommand words: "run", "plugins lock", "plugin serve ...".
			for _, w := range f[1:] {
				more := prog == "tickemu" || strings.HasPrefix(prog, "tickemu plugin")
				if !more || strings.HasPrefix(w, "-") || strings.ContainsAny(w, "./") {
					break
				}
				prog += " " + w
			}
		case strings.HasPrefix(prog, "tickemu-plugin-"):
			prog = "tickemu-plugin-"
		default:
			continue
		}
		c := docCommand{line: n, text: text, prog: prog}
		for _, w := range f[1:] {
			if strings.HasPrefix(w, "--") {
				c.flags = append(c.flags, w)
			}
		}
		out = append(out, c)
	}
	return out
}

func TestDocCommands(t *testing.T) {
	src := "## Walk\n```sh\ntickemu run skipped.hcl --x\n```\n## Ref\n```\n$ dlv exec ./tickemu-plugin-fixed -- --debug   # note\nTICKEMU_X='{}'\ntickemu: run aborted\nexport TICKEMU_Y='{}'\ntickemu plugins lock --plugin-dir d\ntickemu run s.hcl --plugin-call-timeout 0\n```\ntickemu run prose.hcl --no\n"
	got := docCommands(src, "## Walk")
	want := []docCommand{
		{prog: "tickemu-plugin-", flags: []string{"--debug"}},
		{exportedVar: "TICKEMU_Y"},
		{prog: "tickemu plugins lock", flags: []string{"--plugin-dir"}},
		{prog: "tickemu run", flags: []string{"--plugin-call-timeout"}},
	}
	if len(got) != len(want) {
		t.Fatalf("docCommands = %+v", got)
	}
	for i := range want {
		if got[i].prog != want[i].prog || !slices.Equal(got[i].flags, want[i].flags) || got[i].exportedVar != want[i].exportedVar {
			t.Errorf("command %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if !got[3].matches("exec tickemu run x.hcl --plugin-call-timeout 2s") || got[3].matches("exec tickemu run x.hcl") {
		t.Error("matches does not require the program and every flag")
	}
}

// TestPluginsDocListsKinds: docs/plugins.md's "Plugin kinds" table has a row
// for every kind of sdk.Kinds, with its constant's value.
func TestPluginsDocListsKinds(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "docs", "plugins.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(src), "\n## Plugin kinds\n")
	if !ok {
		t.Fatal(`docs/plugins.md has no "## Plugin kinds" section`)
	}
	table, _, _ = strings.Cut(table, "\n## ")
	for _, k := range sdk.Kinds {
		row := regexp.MustCompile("(?m)^\\| `Kind[A-Za-z]+` +\\| `" + regexp.QuoteMeta(string(k)) + "` +\\|")
		if !row.MatchString(table) {
			t.Errorf("docs/plugins.md's Plugin kinds table has no row for kind %q", k)
		}
	}
}
