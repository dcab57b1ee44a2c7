package ktime

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Errors returned by the unit parsers.
var (
	ErrNoUnit   = errors.New("ktime: a unit is required")
	ErrBadUnit  = errors.New("ktime: unknown unit")
	ErrRange    = errors.New("ktime: value out of range")
	ErrSyntax   = errors.New("ktime: malformed number")
	ErrNegative = errors.New("ktime: value must not be negative")
)

var durationUnits = []struct {
	suffix string
	ns     float64
}{
	// Longest suffixes first so "ms" is not read as "m" + "s".
	{"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9},
}

// ParseDuration parses a duration with a mandatory unit ("250us", "1.5ms", "2s", "100ns")
// into whole nanoseconds. Fractions that do not land on a whole nanosecond are rounded to
// the nearest one. Negative values are rejected: the emulator has no use for them in config.
func ParseDuration(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("%w: empty duration", ErrSyntax)
	}
	num, unit := splitNumber(s)
	if unit == "" {
		return 0, fmt.Errorf("%w: %q (write e.g. \"250us\", \"4ms\", \"2s\")", ErrNoUnit, s)
	}
	var mult float64
	for _, u := range durationUnits {
		if unit == u.suffix {
			mult = u.ns
		}
	}
	if mult == 0 {
		return 0, fmt.Errorf("%w %q in %q (use ns, us, ms, s, m, h)", ErrBadUnit, unit, s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q", ErrSyntax, s)
	}
	if v < 0 {
		return 0, fmt.Errorf("%w: %q", ErrNegative, s)
	}
	ns := math.Round(v * mult)
	if ns > math.MaxInt64/2 {
		return 0, fmt.Errorf("%w: %q", ErrRange, s)
	}
	return int64(ns), nil
}

// ParseFrequency parses a frequency with a mandatory unit ("14.318180MHz", "24MHz",
// "1GHz", "100Hz", "32768Hz") into Hz.
func ParseFrequency(s string) (float64, error) {
	s = strings.TrimSpace(s)
	num, unit := splitNumber(s)
	if unit == "" {
		return 0, fmt.Errorf("%w: %q (write e.g. \"24MHz\")", ErrNoUnit, s)
	}
	var mult float64
	switch strings.ToLower(unit) {
	case "hz":
		mult = 1
	case "khz":
		mult = 1e3
	case "mhz":
		mult = 1e6
	case "ghz":
		mult = 1e9
	default:
		return 0, fmt.Errorf("%w %q in %q (use Hz, kHz, MHz, GHz)", ErrBadUnit, unit, s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q", ErrSyntax, s)
	}
	if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%w: %q must be positive", ErrRange, s)
	}
	return v * mult, nil
}

func splitNumber(s string) (num, unit string) {
	i := 0
	for i < len(s) {
		c := s[i]
		if (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' && i > 0 && i+1 < len(s) && (s[i+1] >= '0' && s[i+1] <= '9' || s[i+1] == '-') {
			i++
			continue
		}
		break
	}
	return s[:i], strings.TrimSpace(s[i:])
}
