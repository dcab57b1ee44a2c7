#!/bin/bash
# Re-records the bundles behind profiles/kvm-guest.hcl on this machine and
# fits a profile from them (docs/calibration-fit.md): each workload traced
# with scripts/calibrate-trace.sh, packed with internal/tracebundle, then
# `tickemu calibrate`. Needs root, tracefs, cyclictest (rt-tests) and
# stress-ng; run from the repository root.
#
#   scripts/calibrate-profile.sh OUTDIR [PROFILE]
#
# OUTDIR receives the bundles and calibrate's report; PROFILE (default
# OUTDIR/profile.hcl) the fitted profile.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 OUTDIR [PROFILE]" >&2; exit 2; }
out=$1
profile=${2:-$out/profile.hcl}
for t in cyclictest stress-ng; do
  command -v $t >/dev/null || { echo "$0: $t is missing (Debian: apt-get install rt-tests stress-ng)" >&2; exit 1; }
done
mkdir -p "$out"
go build -o "$out/tickemu" ./cmd/tickemu
note="on $(uname -r) $(uname -m), $(nproc) CPUs; recorded with scripts/calibrate-profile.sh"
record() {
  local name=$1; shift
  scripts/calibrate-trace.sh "$out/$name.trace" -- "$@"
  go run ./internal/tracebundle -trace "$out/$name.trace" -stdout "$out/$name.trace.stdout" \
    -o "$out/$name.tcap" -note "$* $note" -- "$@"
  rm -f "$out/$name.trace" "$out/$name.trace.stdout"
}
record kvm-cyclictest          cyclictest -t2 -a -i 1000 -l 300 -m -q
record kvm-cyclictest-l2000    cyclictest -t2 -a -i 1000 -l 2000 -m -q
record kvm-cyclictest-t1-i500  cyclictest -t1 -a -i 500 -l 2000 -m -q
record kvm-stress-ng-timer     stress-ng --timer 1 -t 1
record kvm-stress-ng-nanosleep stress-ng --nanosleep 1 -t 1
"$out/tickemu" calibrate "$out"/*.tcap --out "$profile" | tee "$out/calibrate.txt"
