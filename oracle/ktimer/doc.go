// SPDX-License-Identifier: GPL-2.0

// Package ktimer drives the kernel oracle: kernel/time/timer.c of a real
// kernel tree built as a user-space library by `make kernel-oracle`
// (scripts/kernel-oracle.sh, docs/kernel-oracle.md). The library is loaded
// at run time with dlopen, so that this package builds without it and a
// missing library is an error that says how to build it.
//
// The library keeps one machine's timer bases in process-wide state: one
// Lib per process, used from one goroutine at a time.
//
// Its files build only with the build tag kernel_oracle (`make test-oracle`
// sets it), so that the module's `go build ./...` and `go test ./...` need
// neither cgo nor the library.
package ktimer
