package capture

import (
	"reflect"
	"testing"
)

// TestMergeSorted: the kernel threads before and after the command, once
// each and in order (one that exited, one that started, most in both).
func TestMergeSorted(t *testing.T) {
	for _, tc := range []struct{ a, b, want []int }{
		{[]int{2, 3, 15, 24}, []int{2, 3, 24, 11708}, []int{2, 3, 15, 24, 11708}},
		{nil, []int{2}, []int{2}},
		{[]int{2}, nil, []int{2}},
		{nil, nil, []int{}},
	} {
		if got := mergeSorted(tc.a, tc.b); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("mergeSorted(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
