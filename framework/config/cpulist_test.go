package config

import (
	"errors"
	"slices"
	"testing"
)

// Cases follow lib/bitmap-str.c:bitmap_parselist() and the examples in its
// comment and in Documentation/admin-guide/kernel-parameters.rst ("cpu lists").
func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr error
	}{
		{"", nil, nil},
		{" , ,", nil, nil},
		{"3", []int{3}, nil},
		{"0-3", []int{0, 1, 2, 3}, nil},
		{"10-13,20", []int{10, 11, 12, 13, 20}, nil},
		{"1,1,0-1", []int{0, 1}, nil},
		{"5 2\t7", []int{2, 5, 7}, nil}, // whitespace separates regions
		{"1\n2", []int{1, 2}, nil},      // Divergence: the kernel stops at '\n'
		{"0-15:2/4", []int{0, 1, 4, 5, 8, 9, 12, 13}, nil},
		{"0-1023:2/256", []int{0, 1, 256, 257, 512, 513, 768, 769}, nil}, // bitmap_parselist() doc example
		{"2-9:1/3", []int{2, 5, 8}, nil},
		{"0-2:3/3", []int{0, 1, 2}, nil},
		{"4095", []int{4095}, nil},
		{"4096", nil, ErrCPUListRange},
		{"3-1", nil, ErrCPUListSyntax},     // start > end: -EINVAL
		{"0-7:0/0", nil, ErrCPUListSyntax}, // group_len 0
		{"0-7:3/2", nil, ErrCPUListSyntax}, // off > group_len
		{"0-7:3", nil, ErrCPUListSyntax},   // pattern without /GROUP
		{"1-", nil, ErrCPUListSyntax},
		{"-1", nil, ErrCPUListSyntax},
		{"1;2", nil, ErrCPUListSyntax},
		{"a", nil, ErrCPUListSyntax},
		{"1.5", nil, ErrCPUListSyntax},
		{"N", nil, ErrCPUListSyntax},   // needs the machine size
		{"all", nil, ErrCPUListSyntax}, // needs the machine size
		{"4294967296", nil, ErrCPUListOverflow},
	}
	for _, tt := range tests {
		got, err := ParseCPUList(tt.in)
		if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && !slices.Equal(got, tt.want)) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseCPUListFor(t *testing.T) {
	tests := []struct {
		in      string
		nr      int
		want    []int
		wantErr error
	}{
		{"N", 8, []int{7}, nil},
		{"4-N", 8, []int{4, 5, 6, 7}, nil},
		{"all", 4, []int{0, 1, 2, 3}, nil},
		{"ALL", 2, []int{0, 1}, nil}, // strncasecmp()
		{"all:1/2", 8, []int{0, 2, 4, 6}, nil},
		{"0-N:1/N", 4, []int{0, 3}, nil},
		{"allx", 4, nil, ErrCPUListSyntax},
		{"8", 8, nil, ErrCPUListRange}, // -ERANGE: end >= nbits
		{"0-8", 8, nil, ErrCPUListRange},
		{"0", 0, nil, ErrCPUListRange},
		{"0", MaxCPUs + 1, nil, ErrCPUListRange},
	}
	for _, tt := range tests {
		got, err := ParseCPUListFor(tt.in, tt.nr)
		if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && !slices.Equal(got, tt.want)) {
			t.Errorf("ParseCPUListFor(%q, %d) = %v, %v; want %v, %v", tt.in, tt.nr, got, err, tt.want, tt.wantErr)
		}
	}
}

// FormatCPUList prints what printk's %*pbl prints (lib/vsprintf.c:bitmap_list_string()).
func TestFormatCPUList(t *testing.T) {
	tests := []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{3}, "3"},
		{[]int{1, 2}, "1-2"},
		{[]int{7, 4, 5, 6, 6}, "4-7"},
		{[]int{0, 2, 3, 4, 9, 11, 12}, "0,2-4,9,11-12"},
		{[]int{-1, 0}, "0"},
	}
	for _, tt := range tests {
		if got := FormatCPUList(tt.in); got != tt.want {
			t.Errorf("FormatCPUList(%v) = %q, want %q", tt.in, got, tt.want)
		}
		if tt.want == "" {
			continue
		}
		back, err := ParseCPUList(tt.want)
		if err != nil || FormatCPUList(back) != tt.want {
			t.Errorf("ParseCPUList(FormatCPUList(%v)) = %v, %v; want a round trip", tt.in, back, err)
		}
	}
}
