// Package repocheck checks that the repository explains itself: every file a
// comment or a document names exists in the repository, and nothing points
// outside it (a parent of the repository, an absolute path on a development
// machine, or a design document that was never committed).
//
// It scans Go comments, Markdown, HCL outside testdata, and the comments of
// the Makefiles and the CI script. A reference is checked when it is a
// repository-relative path (its first element is a top-level entry of the
// repository or an entry of the citing file's directory, it starts with ./
// or ../, or it names a .md document) or a bare document name (NAME.md); it
// must name an existing file or directory relative to the citing file's
// directory or to the repository root (a glob must match something), and a
// bare name may also be the name of any file in the repository. Kernel paths
// such as kernel/time/timer.c are not repository paths and are left alone; a
// path in another repository is written REPO:PATH
// (golang.org/x/perf:cmd/benchstat), which is not taken for one of ours.
package repocheck

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Problem is one bad reference.
type Problem struct {
	File string // repository-relative path of the citing file
	Line int
	Ref  string
	Why  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %q: %s", p.File, p.Line, p.Ref, p.Why) }

// skipDirs are never scanned, and a path into one is not a repository path:
// VCS data, build output and the tests' screenshots (test-artifacts: written
// while other packages' tests run, so whether a file is there yet depends on
// the order the packages ran in), and npm's installed packages (an `npm
// install` in examples/hangcap-node: third-party docs). Fuzz corpora are
// skipped in Check (random bytes, not prose).
var skipDirs = []string{".git", "bin", "test-artifacts", "node_modules"}

// outside matches references that leave the repository whatever the context:
// the sibling directory the design notes live in, and absolute home or
// work directories.
var outside = regexp.MustCompile(`\.\./shared\b|(?:^|[^\w.~/-])(/(?:work|home|Users|root|mnt)/[\w.-]+)`)

// ref matches a path-like token: segments joined by '/', or a bare name with
// a checked extension. It must not be glued to a preceding word, '/' or '.',
// so import paths (github.com/x/y) and URLs are not taken apart.
var ref = regexp.MustCompile(`(?:^|[\s"'` + "`" + `(\[<,=])((?:\.{1,2}/)*[\w*.-]+(?:/[\w*.-]+)+/?|[\w.-]+\.(?:md|go|hcl|txtar|proto)\b)`)

// bareExt: a bare name is checked only when it is a document; a bare .go or
// .hcl name is as often a file a tutorial has the reader write (ab.hcl).
var bareExt = []string{".md"}

// Check scans fsys, the repository's root, and returns every bad reference.
func Check(fsys fs.FS) ([]Problem, error) {
	top := map[string]bool{}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !slices.Contains(skipDirs, e.Name()) {
			top[e.Name()] = true
		}
	}
	names := map[string]bool{} // base names of every file, for bare references
	var files []string
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (slices.Contains(skipDirs, d.Name()) || p == "testdata/fuzz" || strings.HasSuffix(p, "/testdata/fuzz")) {
				return fs.SkipDir
			}
			return nil
		}
		if p == ".git" { // a worktree's .git is a file naming the main checkout
			return nil
		}
		names[d.Name()] = true
		files = append(files, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	c := checker{fsys: fsys, top: top, names: names}
	for _, f := range files {
		if err := c.file(f); err != nil {
			return nil, err
		}
	}
	return c.problems, nil
}

type checker struct {
	fsys     fs.FS
	top      map[string]bool
	names    map[string]bool
	problems []Problem
}

// file checks one file: outside references anywhere in any text file,
// existence of references in the prose parts of the kinds listed in the
// package comment.
func (c *checker) file(p string) error {
	src, err := fs.ReadFile(c.fsys, p)
	if err != nil {
		return err
	}
	if bytes.IndexByte(src, 0) >= 0 || strings.HasSuffix(p, ".pb.go") || path.Base(p) == "go.sum" {
		return nil // binary or generated
	}
	for i, line := range strings.Split(string(src), "\n") {
		for _, m := range outside.FindAllString(line, -1) {
			c.add(p, i+1, strings.TrimLeft(m, " \t\"'`(=,"), "points outside the repository")
		}
	}
	base := path.Base(p)
	switch {
	case strings.HasSuffix(p, ".go"):
		return c.goComments(p, src)
	case strings.HasSuffix(p, ".md"),
		strings.HasSuffix(p, ".hcl") && !strings.Contains(p, "testdata/"):
		c.prose(p, 1, string(src))
	case base == "Makefile", strings.HasSuffix(p, ".mk"), p == ".ci/run":
		// Only the comments: recipes name files they create.
		for i, line := range strings.Split(string(src), "\n") {
			if _, comment, ok := strings.Cut(line, "#"); ok {
				c.prose(p, i+1, comment)
			}
		}
	}
	return nil
}

func (c *checker) goComments(p string, src []byte) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	for _, g := range f.Comments {
		for _, cm := range g.List {
			c.prose(p, fset.Position(cm.Slash).Line, commentText(cm))
		}
	}
	return nil
}

// commentText is the comment without its markers, lines kept.
func commentText(cm *ast.Comment) string {
	t := cm.Text
	if strings.HasPrefix(t, "//") {
		return t[2:]
	}
	return strings.TrimSuffix(strings.TrimPrefix(t, "/*"), "*/")
}

// prose checks the references in text, which starts at line first of p.
func (c *checker) prose(p string, first int, text string) {
	dir := path.Dir(p)
	for i, line := range strings.Split(text, "\n") {
		for _, m := range ref.FindAllStringSubmatch(line, -1) {
			r := strings.TrimRight(m[1], ".,:;)")
			if why := c.resolve(dir, r); why != "" {
				c.add(p, first+i, r, why)
			}
		}
	}
}

// resolve returns why r is a bad reference from a file in dir, or "".
func (c *checker) resolve(dir, r string) string {
	r = strings.TrimSuffix(r, "/")
	if i := strings.IndexByte(r, '#'); i >= 0 {
		r = r[:i]
	}
	if slices.ContainsFunc(strings.Split(r, "/"), isPlaceholder) {
		return ""
	}
	up := strings.HasPrefix(r, "../")
	r = strings.TrimPrefix(r, "./") // ./x is x: a command's output (./tickemu-fixed) is a bare name
	if !strings.Contains(r, "/") {
		if !slices.Contains(bareExt, path.Ext(r)) || c.names[r] || strings.Contains(r, "*") {
			return ""
		}
		if c.exists(path.Join(dir, r)) {
			return ""
		}
		return "no file of this name in the repository"
	}
	head := strings.SplitN(r, "/", 2)[0]
	if slices.Contains(skipDirs, head) {
		return "" // build output: there or not depending on what was built
	}
	if !up && head != "." && !c.top[head] && !c.exists(path.Join(dir, head)) && path.Ext(r) != ".md" {
		return "" // not a repository path (a kernel path, a module path, ...)
	}
	candidates := []string{path.Join(dir, r)}
	if !up { // also relative to the root, where commands run
		candidates = append(candidates, path.Clean(r))
	}
	for _, cand := range candidates {
		if cand == ".." || strings.HasPrefix(cand, "../") {
			return "points outside the repository"
		}
		if c.exists(cand) {
			return ""
		}
	}
	return "no such file or directory in the repository"
}

// placeholders stand for any name in a path: configs/FILE, configs/NAME.hcl.
var placeholders = []string{"FILE", "NAME", "DIR", "KIND", "PKG", "N"}

func isPlaceholder(seg string) bool {
	stem, _, _ := strings.Cut(seg, ".")
	return slices.Contains(placeholders, stem)
}

func (c *checker) exists(p string) bool {
	if strings.ContainsAny(p, "*?[") {
		m, err := fs.Glob(c.fsys, p)
		return err == nil && len(m) > 0
	}
	_, err := fs.Stat(c.fsys, p)
	return err == nil
}

func (c *checker) add(p string, line int, r, why string) {
	c.problems = append(c.problems, Problem{File: p, Line: line, Ref: r, Why: why})
}
