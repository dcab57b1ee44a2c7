package workload

import "testing"

// TestTypesListed: the list in workload.go is sorted by name (Types and the
// help list it in that order) and names each type once, and every type can
// be made and documented.
func TestTypesListed(t *testing.T) {
	for i, ty := range types {
		if ty.Name == "" || ty.Doc == "" || ty.New == nil {
			t.Errorf("types[%d] = %q: want a name, a Doc and New", i, ty.Name)
		}
		if i > 0 && types[i-1].Name >= ty.Name {
			t.Errorf("types: %q listed after %q, want sorted and unique names", ty.Name, types[i-1].Name)
		}
		if got, ok := Lookup(ty.Name); !ok || got.Name != ty.Name {
			t.Errorf("Lookup(%q) = %q, %v", ty.Name, got.Name, ok)
		}
	}
	if _, ok := Lookup("no_such_workload"); ok {
		t.Error(`Lookup("no_such_workload") found a type`)
	}
}
