#!/usr/bin/env bash
# SDK API compatibility check (make api-check, make api-baseline).
#
# The baseline is a commit, not a file of export data: the last commit that
# changed api/sdk/BASELINE. That file holds one line, `protocol N`, the
# sdk.ProtocolVersion (framework/sdk/plugin.go) the baseline was taken at;
# `make api-baseline` writes it, in the same commit that bumps the version.
# The commit is looked up in the history, not recorded: a commit cannot name
# itself, and land.sh's rebase changes branch commit ids, so a recorded id
# would point outside main. Rerunning api-baseline without a bump rewrites
# the same bytes, so the baseline does not move. tickemu has no release tag
# yet; after the first release the baseline becomes the last tag of the
# protocol version.
#
# `make api-check` exports (git archive) the baseline commit into a temp dir,
# writes apidiff export data of every package under framework/sdk there, and
# compares the working tree with it. Nothing is written into the repository,
# so the check is the same on every clone (it needs the history back to the
# baseline commit: a full clone). It fails when
#   - an SDK package changed incompatibly (apidiff -incompatible), or
#   - sdk.ProtocolVersion differs from api/sdk/BASELINE (bumped: run
#     make api-baseline and commit it with the bump), or
#   - an SDK package of the baseline was removed.
# Compatible additions (and new packages) are listed and pass. While a new
# api/sdk/BASELINE is not committed yet, the working tree is its own baseline.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
GO=${GO:-go}
base=api/sdk
apidiff() { "$GO" tool -modfile="$root/tools/go.mod" apidiff "$@"; }
protoline='^const ProtocolVersion = \([0-9][0-9]*\)$'
proto=$(sed -n "s/$protoline/\1/p" framework/sdk/plugin.go)
[ -n "$proto" ] || { echo "api: no 'const ProtocolVersion = N' in framework/sdk/plugin.go" >&2; exit 1; }

case "${1:-}" in
baseline)
	mkdir -p "$base"
	echo "protocol $proto" > "$base/BASELINE"
	rm -f "$base/PROTOCOL" "$base"/*.export
	echo "api: wrote $base/BASELINE (protocol $proto): commit it; that commit is the baseline"
	;;
check)
	[ -f "$base/BASELINE" ] || { echo "api: no $base/BASELINE: run make api-baseline" >&2; exit 1; }
	bproto=$(sed -n 's/^protocol \([0-9][0-9]*\)$/\1/p' "$base/BASELINE")
	[ -n "$bproto" ] || { echo "api: $base/BASELINE:1: want 'protocol N': run make api-baseline" >&2; exit 1; }
	if [ "$proto" != "$bproto" ]; then
		echo "api: sdk.ProtocolVersion is $proto, $base/BASELINE has protocol $bproto: run make api-baseline and commit $base with the bump" >&2
		exit 1
	fi
	git rev-parse --git-dir >/dev/null 2>&1 || { echo "api: not a git checkout: the baseline is a commit of the history" >&2; exit 1; }
	if ! git diff --quiet HEAD -- "$base/BASELINE" 2>/dev/null || [ -z "$(git ls-files -- "$base/BASELINE")" ]; then
		echo "api: $base/BASELINE (protocol $proto) is not committed yet: the commit that adds it is the new baseline"
		exit 0
	fi
	commit=$(git log -1 --format=%H HEAD -- "$base/BASELINE")
	if [ -z "$commit" ] || [ "$(git rev-parse --is-shallow-repository)" = true ]; then
		echo "api: the baseline commit (the last one that changed $base/BASELINE) may be missing from" >&2
		echo "     this shallow clone: fetch the full history (git fetch --unshallow) and rerun" >&2
		exit 1
	fi
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/tickemu-api.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	mkdir "$tmp/base" "$tmp/export"
	git archive "$commit" | tar -x -C "$tmp/base"
	pkgs=$("$GO" list ./framework/sdk/...)
	bpkgs=$(cd "$tmp/base" && "$GO" list ./framework/sdk/...)
	export_file() { local p=${1#github.com/tickemu/tickemu/}; echo "$tmp/export/${p//\//_}"; }
	for p in $bpkgs; do (cd "$tmp/base" && apidiff -w "$(export_file "$p")" "$p"); done
	fail=0
	for p in $pkgs; do
		f=$(export_file "$p")
		if [ ! -f "$f" ]; then
			echo "api: $p is new since the baseline ${commit:0:12} (protocol $proto):"
			echo "    new package"
			continue
		fi
		bad=$(apidiff -incompatible "$f" "$p")
		all=$(apidiff "$f" "$p")
		if [ -n "$bad" ]; then
			echo "api: $p changed incompatibly since the baseline ${commit:0:12} (protocol $proto):" >&2
			echo "$bad" | sed 's/^/    /' >&2
			fail=1
		elif [ -n "$all" ]; then
			echo "api: $p compatible changes since the baseline ${commit:0:12}:"
			echo "$all" | sed 's/^/    /'
		fi
	done
	for p in $bpkgs; do
		case " $(echo $pkgs) " in *" $p "*) ;; *) echo "api: SDK package $p was removed" >&2; fail=1 ;; esac
	done
	if [ $fail = 1 ]; then
		echo "api: an incompatible SDK change needs a protocol version change: bump sdk.ProtocolVersion" >&2
		echo "     (framework/sdk/plugin.go), run make api-baseline and commit $base with it" >&2
		exit 1
	fi
	echo "api: framework/sdk is compatible with the baseline ${commit:0:12} (protocol $proto)"
	;;
*)
	echo "usage: make/api.sh check|baseline" >&2
	exit 2
	;;
esac
