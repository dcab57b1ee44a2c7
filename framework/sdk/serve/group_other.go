//go:build !unix

package serve

// killOwnGroup: no process groups outside Unix.
func killOwnGroup() {}
