package sdktest

import (
	"testing"

	"github.com/tickemu/tickemu/framework/sdk"
	"github.com/tickemu/tickemu/framework/sdk/eras"
)

// checkEras holds a schema's kernel eras (sdk.Attribute.Eras) to the rules
// the host's version table applies (eras.Check): releases in order and in the
// covered range, a first era with no commit, later ones with a 12-hex commit
// (or a Note saying why not) and a title, values the attribute allows. A
// strategy attribute with neither eras nor Unversioned is allowed (it keeps
// its default at every kernel version) but logged, so an author sees it.
func checkEras(t *testing.T, s sdk.Schema) {
	t.Helper()
	for _, a := range s.Attributes {
		if len(a.Eras) == 0 {
			if a.Strategy() && a.Unversioned == "" {
				t.Logf("%s is a strategy attribute with no kernel eras and no Unversioned reason: kernel versions leave it at its default", a.Name)
			}
			continue
		}
		if err := eras.Check(a); err != nil {
			t.Errorf("kernel eras of %s: %v", a.Name, err)
		}
	}
}
