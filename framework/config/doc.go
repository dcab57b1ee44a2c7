// Package config loads tickemu's HCL configuration files.
//
// Start with [Load] (or [LoadBytes]): it parses one file, resolves variables
// (default < selected variant < --var), decodes the host's own blocks (machine,
// run) and returns a [Spec]. Blocks whose schema belongs to someone else are
// kept as bodies: each plugin block's body minus the host's plugin and
// isolation attributes, the kernel block and every workload block. The engine
// decodes them with [Spec.DecodePlugin] or [Spec.DecodeBody] once it knows the
// plugin's or its own [sdk.Schema], so every error points at the user's file.
//
// A file looks like this:
//
//	variable "hang_delay" { default = "max_hang_time" }
//
//	machine {
//	  cpus      = 8
//	  hz        = 1000
//	  nohz      = "full"   # off | idle | full
//	  nohz_full = "1-7"    # or [1, 2, 3]: kernel cpulist syntax
//	  idle_state "C6" {
//	    exit_latency      = "133us"
//	    target_residency  = "600us"
//	    stops_local_timer = true
//	  }
//	}
//	wheel { layout = "cascade" }
//	hrtimer { hang_delay = var.hang_delay }
//	clockevent "local" {
//	  plugin    = "lapic"
//	  isolation = "process"
//	}
//	clockevent "broadcast" { plugin = "hpet" }
//	kernel { posix_timer_signals = "consistent" }
//	workload "cyclictest" "rt" {
//	  threads  = 4
//	  cpus     = "4-7"
//	  interval = "1000us"
//	}
//	run { duration = "2s" }
//	variant "fixed" { vars = { hang_delay = "fixed_100ms" } }
//
// A block written on one line holds at most one argument (an HCL rule); write
// blocks with several arguments over several lines.
//
// Decoding is strict: an unknown block or attribute is an error that suggests
// the nearest name and lists the allowed ones, because a typo in an emulator
// config silently changes an experiment. Durations and frequencies are strings
// with units ("250us", "14.318180MHz"); a bare number is refused rather than
// guessed. Expressions may use var.NAME and the deterministic functions of
// [Functions]; nothing reads the clock, the environment or other files.
//
// [Spec.Hash] identifies the evaluated configuration for run metadata, and
// [WriteDiagnostics] prints diagnostics with source snippets.
package config
