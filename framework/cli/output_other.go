//go:build !unix

package cli

import "os"

// closedStdout cannot tell here; a write error still makes the status 1.
func closedStdout(*os.File) bool { return false }
