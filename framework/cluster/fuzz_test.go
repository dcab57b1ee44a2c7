package cluster

import (
	"fmt"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzEmitters puts an arbitrary value in one field of a job. The emitters
// either refuse it or write a script and a manifest of the same shape as
// for a harmless value: the Slurm script (bash) and the pod's command
// (POSIX sh) parse to the same commands, substitutions, expansions and
// redirections, and the manifest decodes strictly into exactly its three
// objects. A value that changed the shape would be code, not data.
func FuzzEmitters(f *testing.F) {
	for _, h := range hostile {
		for field := range 6 {
			f.Add(uint8(field), h)
		}
	}
	f.Fuzz(func(t *testing.T, field uint8, v string) {
		base, job := fuzzJob(field, "harmless"), fuzzJob(field, v)
		if s, err := Slurm(job); err == nil {
			want, err := Slurm(base)
			if err != nil {
				t.Fatalf("the harmless job fails: %v", err)
			}
			if got, want := shape(t, s, syntax.LangBash), shape(t, want, syntax.LangBash); got != want {
				t.Fatalf("field %d = %q changes the Slurm script's shape:\n%s\nwant\n%s\n%s", field, v, got, want, s)
			}
		}
		m, err := Kubernetes(job)
		if err != nil {
			return
		}
		_, j, _ := manifestObjects(t, m)
		want, err := Kubernetes(base)
		if err != nil {
			t.Fatalf("the harmless job fails: %v", err)
		}
		_, bj, _ := manifestObjects(t, want)
		got, wantShape := shape(t, j.Spec.Template.Spec.Containers[0].Command[2], syntax.LangPOSIX),
			shape(t, bj.Spec.Template.Spec.Containers[0].Command[2], syntax.LangPOSIX)
		if got != wantShape {
			t.Fatalf("field %d = %q changes the pod command's shape:\n%s\nwant\n%s", field, v, got, wantShape)
		}
	})
}

// fuzzJob is testJob with v in one field (its index modulo 6).
func fuzzJob(field uint8, v string) Job {
	j := testJob()
	j.Tickemu, j.File, j.Results = "/opt/bin/tickemu", "/data/nohz.hcl", "/data/results"
	switch field % 6 {
	case 0:
		j.File = "/data/" + v + ".hcl"
	case 1:
		j.Args = []string{"--var", "duration=" + v}
	case 2:
		j.Results = "/data/" + v
	case 3:
		j.Tickemu = "/opt/bin/" + v
	case 4:
		j.Image = v
	case 5:
		j.Claim = v
	}
	return j
}

// shape parses a script and lists, in order, its statements and every node
// that runs or expands something; quoted words (literals) are left out.
func shape(t *testing.T, script string, lang syntax.LangVariant) string {
	t.Helper()
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(script), "")
	if err != nil {
		t.Fatalf("the script does not parse: %v\n%s", err, script)
	}
	var b strings.Builder
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			fmt.Fprintf(&b, "stmt@%d ", n.Pos().Line())
		case *syntax.CallExpr:
			fmt.Fprintf(&b, "call(%d) ", len(n.Args))
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp, *syntax.ParamExp, *syntax.Redirect,
			*syntax.BinaryCmd, *syntax.IfClause, *syntax.CaseClause, *syntax.ForClause, *syntax.FuncDecl, *syntax.Subshell:
			fmt.Fprintf(&b, "%s ", strings.TrimPrefix(fmt.Sprintf("%T", n), "*syntax."))
		}
		return true
	})
	return b.String()
}
