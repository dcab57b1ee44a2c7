package sdktest

import (
	"testing"

	"github.com/tickemu/tickemu/framework/kernelversion"
	"github.com/tickemu/tickemu/framework/sdk"
)

// checkEras holds a schema's kernel eras (sdk.Attribute.Eras) to the rules
// the version table applies: releases in order and in the covered range, a
// first era with no commit, later ones with a 12-hex commit (or a Note saying
// why not) and a title, values the attribute allows. A strategy attribute
// with neither eras nor Unversioned is allowed (it keeps its default at every
// kernel version) but logged, so an author sees it.
func checkEras(t *testing.T, s sdk.Schema) {
	t.Helper()
	var tb kernelversion.Table
	if err := tb.Add("plugin", "", s); err != nil {
		t.Error(err)
	}
	for _, k := range tb.Undeclared {
		t.Logf("%s is a strategy attribute with no kernel eras and no Unversioned reason: kernel versions leave it at its default", k.Attr)
	}
}
