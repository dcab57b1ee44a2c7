// SPDX-License-Identifier: GPL-2.0

//go:build kernel_oracle

package wheeldiff

import (
	"flag"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tickemu/tickemu/oracle/ktimer"
)

var (
	seqs   = flag.Int("seqs", 500, "random sequences TestRandomSequences runs")
	seqOps = flag.Int("ops", 2000, "operations per random sequence")
	set    = flag.String("set", "", "plugin attributes to override, NAME=VALUE,... (the release's eras otherwise)")
)

// runner opens the oracle library built by `make kernel-oracle`; without
// it the tests fail, saying how to build it.
func runner(t testing.TB) *Runner {
	t.Helper()
	lib, err := ktimer.Open(ktimer.DefaultPath())
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(lib, DefaultMachine)
	if err != nil {
		t.Fatal(err)
	}
	if *set != "" {
		for _, kv := range strings.Split(*set, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				t.Fatalf("-set %q: want NAME=VALUE,...", *set)
			}
			r.Set(k, v)
		}
	}
	return r
}

// randomOps is a sequence of n random operations from seed.
func randomOps(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	b := make([]byte, n*opSize)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// TestRandomSequences runs -seqs random sequences of -ops operations
// through the kernel's timer.c and plugins/wheel and fails on every
// mismatch (each reported with the operations before it).
func TestRandomSequences(t *testing.T) {
	r := runner(t)
	t.Logf("kernel oracle %s (%s), HZ=%d; plugin config %v", r.lib.Release(), r.lib.Path(), r.hz, r.Config())
	failed := 0
	for seed := uint64(1); seed <= uint64(*seqs); seed++ {
		if m := r.Run(randomOps(seed, *seqOps)); m != nil {
			failed++
			t.Errorf("seed %d: %v", seed, m)
			if failed >= 10 {
				t.Fatalf("stopping after %d mismatching sequences", failed)
			}
		}
	}
	t.Logf("%d operations compared in %d sequences, %d mismatching; %d base comparisons with clocks equal only once forwarded; %d remote wake-ups",
		r.Compared, *seqs, failed, r.RawClockDiffs, r.Wakeups)
}

// FuzzWheelVsKernel lets the fuzzer write the operation sequences.
func FuzzWheelVsKernel(f *testing.F) {
	for seed := uint64(1); seed <= 4; seed++ {
		f.Add(randomOps(seed, 64))
	}
	r := runner(f)
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 4096*opSize {
			ops = ops[:4096*opSize]
		}
		if m := r.Run(ops); m != nil {
			t.Fatal(m)
		}
	})
}
