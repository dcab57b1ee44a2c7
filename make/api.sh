#!/usr/bin/env bash
# SDK API compatibility check (make api-check, make api-baseline).
#
# api/sdk/ is the baseline: apidiff export data of every package under
# framework/sdk, written by `make api-baseline`, and PROTOCOL, the
# sdk.ProtocolVersion it was written at. tickemu has no release tag yet, so
# the baseline is tag-free: it is regenerated (and committed) exactly when
# the protocol version changes. `make api-check` fails when
#   - an SDK package changed incompatibly (apidiff -incompatible) while
#     sdk.ProtocolVersion still equals PROTOCOL, or
#   - sdk.ProtocolVersion differs from PROTOCOL (bumped: regenerate), or
#   - an SDK package is missing from the baseline or from the tree.
# Compatible additions are listed and pass.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
base=api/sdk
apidiff() { "$GO" tool -modfile=tools/go.mod apidiff "$@"; }
proto=$(sed -n 's/^const ProtocolVersion = \([0-9][0-9]*\)$/\1/p' framework/sdk/plugin.go)
[ -n "$proto" ] || { echo "api: no 'const ProtocolVersion = N' in framework/sdk/plugin.go" >&2; exit 1; }
pkgs=$("$GO" list ./framework/sdk/...)
export_file() { local p=${1#github.com/tickemu/tickemu/}; echo "$base/${p//\//_}.export"; }

case "${1:-}" in
baseline)
	rm -rf "$base"
	mkdir -p "$base"
	for p in $pkgs; do apidiff -w "$(export_file "$p")" "$p"; done
	echo "$proto" > "$base/PROTOCOL"
	echo "api: wrote $base for protocol version $proto ($(echo "$pkgs" | wc -w) packages)"
	;;
check)
	[ -f "$base/PROTOCOL" ] || { echo "api: no baseline: run make api-baseline" >&2; exit 1; }
	bproto=$(cat "$base/PROTOCOL")
	fail=0
	for p in $pkgs; do
		f=$(export_file "$p")
		if [ ! -f "$f" ]; then
			echo "api: $p is not in the baseline $base: run make api-baseline and commit it" >&2
			fail=1
			continue
		fi
		bad=$(apidiff -incompatible "$f" "$p")
		all=$(apidiff "$f" "$p")
		if [ -n "$bad" ]; then
			echo "api: $p changed incompatibly since the baseline (protocol $bproto):" >&2
			echo "$bad" | sed 's/^/    /' >&2
			fail=1
		elif [ -n "$all" ]; then
			echo "api: $p compatible changes:"
			echo "$all" | sed 's/^/    /'
		fi
	done
	for f in "$base"/*.export; do
		found=0
		for p in $pkgs; do [ "$(export_file "$p")" = "$f" ] && found=1; done
		[ $found = 1 ] || { echo "api: the SDK package of $f was removed" >&2; fail=1; }
	done
	if [ "$proto" != "$bproto" ]; then
		echo "api: sdk.ProtocolVersion is $proto, the baseline's is $bproto: run make api-baseline and commit $base" >&2
		exit 1
	fi
	if [ $fail = 1 ]; then
		echo "api: an incompatible SDK change needs a protocol version change: bump sdk.ProtocolVersion" >&2
		echo "     (framework/sdk/plugin.go), then run make api-baseline and commit $base" >&2
		exit 1
	fi
	echo "api: framework/sdk is compatible with the baseline (protocol $proto)"
	;;
*)
	echo "usage: make/api.sh check|baseline" >&2
	exit 2
	;;
esac
