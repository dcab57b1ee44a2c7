package main

import (
	"fmt"
	"io"
)

func cmdCompare(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "tickemu compare: see issue 7")
	return 2
}
