package config

import "errors"

// Errors returned by the cpulist parsers. They mirror the error codes of
// lib/bitmap-str.c:bitmap_parselist(): -EINVAL, -ERANGE and -EOVERFLOW.
var (
	ErrCPUListSyntax   = errors.New("config: malformed cpulist")
	ErrCPUListRange    = errors.New("config: CPU number out of range")
	ErrCPUListOverflow = errors.New("config: number too large in cpulist")
)
