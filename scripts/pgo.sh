#!/usr/bin/env bash
# pgo.sh: rebuilds cmd/tickemu/tickemu.pgo, the CPU profile Go's
# profile-guided optimisation builds the shipped binary with (`make build`
# and `make bench` pass it with -pgo; it is not named default.pgo, so the
# tests, which would pick that up for cmd/tickemu alone and compile the whole
# tree a second time, build without it). The profile is the engine at work on
# what users run: every shipped scenario (each variant, at most 2 s of wall
# time each) and the two 64-CPU cases of framework/cli's BenchmarkEngine64,
# all profiled with a binary built without PGO so the profile does not feed
# on itself. The benchmark's bare heap loop, the yardstick it is measured
# against, is left out of the profile (pprof -ignore): optimising the
# yardstick for itself would skew the x-bare-loop ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$GO build -pgo=off -o "$tmp/tickemu" ./cmd/tickemu
n=0
for f in configs/*.hcl; do
	while IFS= read -r v; do
		[ -n "$v" ] || continue
		args=()
		[ "$v" = "(no variant)" ] || args=(--variant "$v")
		n=$((n + 1))
		# Exit status 1 is a run stopped at --max-wall: its profile counts.
		"$tmp/tickemu" run "$f" "${args[@]}" --format json --max-wall 2s \
			--cpuprofile "$tmp/run-$n.pprof" >/dev/null 2>"$tmp/err" || [ $? -eq 1 ] ||
			{ cat "$tmp/err" >&2; exit 1; }
	done < <("$tmp/tickemu" validate "$f" | sed -n 's/^[^:]*: \(.*\) ok$/\1/p')
done
(cd framework/cli && $GO test -pgo=off -run '^$' -bench 'Engine64/' -benchtime 3x \
	-o "$tmp/cli.test" -cpuprofile "$tmp/engine64.pprof" . >/dev/null)
$GO tool pprof -proto -ignore 'cli\.bare' "$tmp/engine64.pprof" >"$tmp/engine64.pgo" 2>/dev/null
$GO tool pprof -proto "$tmp"/run-*.pprof "$tmp/engine64.pgo" >cmd/tickemu/tickemu.pgo 2>/dev/null
echo "pgo.sh: cmd/tickemu/tickemu.pgo from $n scenario runs and BenchmarkEngine64 ($(wc -c <cmd/tickemu/tickemu.pgo) bytes)"
