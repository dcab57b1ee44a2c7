package main

import "github.com/tickemu/tickemu/internal/builtin"

// builtins are the plugins linked into tickemu (internal/builtin).
var builtins = builtin.Factories()
