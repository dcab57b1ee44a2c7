//go:build race

package main

// raceDetector: the tests run under -race (about ten times slower).
const raceDetector = true
