#!/usr/bin/env bash
# kernel-oracle.sh: build the kernel oracle, the kernel's own
# kernel/time/timer.c compiled as position-independent user code and linked
# with the shim in oracle/shim into libktimer-oracle.so (docs/kernel-oracle.md).
#
#   KERNEL_SRC=DIR   build from this kernel tree (e.g. a patched one) instead
#                    of Debian's linux-source-6.12, installed with apt-get
#   ORACLE_OUT=DIR   where to put the library, oracle.h and build-info.txt
#                    (default bin/oracle in the repository; gitignored)
#   KERNEL_ORACLE_CACHE=DIR  unpacked source and prepared build trees
#                    (default ${XDG_CACHE_HOME:-~/.cache}/tickemu/kernel-oracle)
#   ORACLE_HZ=N      CONFIG_HZ of the build: 100, 250 (default), 300 or 1000
#                    (a scenario run with the kwheel plugin needs its machine's HZ)
#   FORCE=1          rebuild even if the cached library matches
#
# The kernel tree is configured once per tree (x86_64 defconfig trimmed:
# tracing, jump labels, CPU mitigations, stack protector and paravirt off,
# HZ=$ORACLE_HZ, PREEMPT_NONE) and `make prepare`d out of tree; each library build
# is keyed by a hash of the wheel's sources in the tree, the shim, this
# script and the configuration, and reused while the key matches.
set -euo pipefail

start=$(date +%s)
repo=$(cd "$(dirname "$0")/.." && pwd)
shim=$repo/oracle/shim
cache=${KERNEL_ORACLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tickemu/kernel-oracle}
out=${ORACLE_OUT:-$repo/bin/oracle}
pkg=linux-source-6.12
hz=${ORACLE_HZ:-250}
case "$hz" in 100|250|300|1000) ;; *) echo "kernel-oracle: ORACLE_HZ=$hz is not a CONFIG_HZ choice (100, 250, 300, 1000)" >&2; exit 1;; esac
mkdir -p "$cache" "$out"
out=$(cd "$out" && pwd)

say() { echo "kernel-oracle: $*"; }
die() { echo "kernel-oracle: $*" >&2; exit 1; }

for tool in gcc make objcopy objdump flex bison bc sha256sum python3; do
	command -v "$tool" >/dev/null || missing="${missing:-} $tool"
done
if [ -n "${missing:-}" ] || [ ! -e /usr/include/libelf.h ] || [ ! -e /usr/include/openssl/ssl.h ]; then
	[ "$(id -u)" = 0 ] || die "missing build tools (${missing:-libelf-dev/libssl-dev}): apt-get install gcc make binutils flex bison bc libelf-dev libssl-dev python3"
	say "installing the kernel build tools (apt-get)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q gcc make binutils flex bison bc libelf-dev libssl-dev python3 >/dev/null
fi

# --- The kernel tree ---
if [ -n "${KERNEL_SRC:-}" ]; then
	src=$(cd "$KERNEL_SRC" && pwd)
	[ -f "$src/kernel/time/timer.c" ] || die "KERNEL_SRC=$KERNEL_SRC has no kernel/time/timer.c"
	[ ! -e "$src/.config" ] || die "$src has a .config: the tree must be clean for an out-of-tree build (make mrproper)"
	name=$(basename "$src")
else
	tarball=/usr/src/$pkg.tar.xz
	if [ ! -f "$tarball" ]; then
		[ "$(id -u)" = 0 ] || die "$pkg is not installed: run 'apt-get install $pkg' as root (Debian 12: bookworm-security)"
		say "installing $pkg (apt-get)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >/dev/null || {
			apt-get update -q >/dev/null
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$pkg" >/dev/null
		}
	fi
	version=$(dpkg-query -W -f '${Version}' "$pkg")
	src=$cache/$pkg
	if [ "$(cat "$src.version" 2>/dev/null)" != "$version" ]; then
		say "unpacking $tarball ($pkg $version)"
		rm -rf "$src" "$src.version"
		tar -C "$cache" -xf "$tarball"
		echo "$version" >"$src.version"
	fi
	name=$pkg-$version
fi
release=$(make -s -C "$src" kernelversion)
# --- Configure and prepare (once per tree and configuration) ---
cfgopts=(-d FTRACE -d JUMP_LABEL -d CPU_MITIGATIONS -d STACKPROTECTOR -d STACKPROTECTOR_STRONG
	-d PARAVIRT -d KVM_GUEST -d DEBUG_INFO -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -d DEBUG_INFO_DWARF5
	-e DEBUG_INFO_NONE -d KPROBES -d LOCKDEP -d HZ_1000 -d HZ_100 -d HZ_300 -d HZ_250 -e "HZ_$hz"
	-d PREEMPT_VOLUNTARY -d PREEMPT_DYNAMIC -d PREEMPT -e PREEMPT_NONE -d SCHED_CORE)
cfgkey=$(printf '%s\n' "$release" "${cfgopts[@]}" | sha256sum | cut -c1-16)
# One prepared build directory per tree and configuration.
build=$cache/build-$(printf '%s %s' "$src" "$cfgkey" | sha256sum | cut -c1-12)
if [ "$(cat "$build/.oracle-prepared" 2>/dev/null)" != "$cfgkey" ]; then
	say "configuring and preparing $release in $build (a minute or two the first time)"
	mkdir -p "$build"
	make -s -C "$src" O="$build" defconfig >/dev/null
	"$src/scripts/config" --file "$build/.config" "${cfgopts[@]}"
	make -s -C "$src" O="$build" olddefconfig >/dev/null
	grep -q '^CONFIG_JUMP_LABEL=y' "$build/.config" && die "could not turn CONFIG_JUMP_LABEL off"
	grep -q "^CONFIG_HZ=$hz\$" "$build/.config" || die "could not set CONFIG_HZ=$hz"
	grep -q '^CONFIG_NO_HZ_COMMON=y' "$build/.config" || die "CONFIG_NO_HZ_COMMON is off"
	make -s -C "$src" O="$build" -j"$(nproc)" prepare >/dev/null
	echo "$cfgkey" >"$build/.oracle-prepared"
fi

# --- The cache key: the wheel's sources, the shim, this script, the config ---
key=$( {
	echo "$release $cfgkey"
	cat "$src"/kernel/time/timer.c "$src"/kernel/time/tick-internal.h "$src"/kernel/time/timer_migration.h \
		"$src"/include/linux/timer.h "$src"/include/linux/timer_types.h "$src"/include/linux/jiffies.h \
		"$src"/Makefile 2>/dev/null
	cat "$shim"/*.c "$shim"/*.h "$0"
} | sha256sum | cut -c1-16)
lib=$out/libktimer-oracle.so
if [ "${FORCE:-}" != 1 ] && [ -f "$lib" ] && grep -qx "key: $key" "$out/build-info.txt" 2>/dev/null; then
	say "up to date: $lib ($release, key $key), checked in $(( $(date +%s) - start )) s"
	exit 0
fi

# --- Compile ---
say "building $lib from $release ($name)"
obj=$build/oracle
rm -rf "$obj"
mkdir -p "$obj"
# The kernel's own command line for timer.o, from kbuild.
make -s -C "$src" O="$build" kernel/time/timer.o >/dev/null
kflags=$(sed -n 's/^savedcmd_kernel\/time\/timer.o := //p' "$build/kernel/time/.timer.o.cmd" | python3 -c '
import shlex, sys
args = shlex.split(sys.stdin.read())[1:]
# Dropped: the kernel code model and non-PIE code (user code is PIC), the
# kernel stack alignment (the shim calls the C library), -Werror (a kernel
# bump must not fail on a warning in the shim), dependency output, the
# module name, and the source and object names.
drop = {"-mcmodel=kernel", "-fno-PIE", "-mpreferred-stack-boundary=3", "-c", "-Werror"}
out, i = [], 0
while i < len(args):
    a = args[i]
    if a == "-o":
        i += 2
        continue
    if not (a in drop or a.startswith("-Wp,") or a.endswith(".c") or a.startswith("-DKBUILD") or a.startswith("-D__KBUILD")):
        out.append(a)
    i += 1
print(" ".join(shlex.quote(a) for a in out))')
[ -n "$kflags" ] || die "no compiler command for kernel/time/timer.o in $build"
cc_kernel() { # unit object [extra flags]
	local unit=$1 o=$2
	shift 2
	(cd "$build" && eval gcc "$kflags" -fPIC -I"$shim" -include "$shim/prelude.h" "$@" -c -o "$o" "$unit")
}
cc_kernel "$shim/oracle.c" "$obj/oracle.o" "-DTK_TIMER_C='\"$src/kernel/time/timer.c\"'"
cc_kernel "$shim/shim.c" "$obj/shim.o"
gcc -O2 -fPIC -Wall -c -o "$obj/host.o" "$shim/host.c"

# Every per-CPU section moves into one, tk_percpu, which the linker
# brackets with __start_tk_percpu/__stop_tk_percpu: the template each CPU's
# copy is made from.
for o in "$obj/oracle.o" "$obj/shim.o"; do
	args=()
	for s in $(objdump -h "$o" | awk '$2 ~ /^\.data\.\.percpu/ {print $2}'); do
		args+=(--rename-section "$s=tk_percpu")
	done
	# .export_symbol lists EXPORT_SYMBOL()s for modpost; nothing here needs
	# it, and its absolute addresses would need text relocations.
	objcopy -R .export_symbol "${args[@]}" "$o"
done

# -z defs: a symbol the shim does not provide fails the link, by name.
# Only the kwo_* entry points are exported: the kernel's own names
# (timer_delete, add_timer, ...) must bind inside the library, never to the
# C library's functions of the same name.
echo '{ global: kwo_*; local: *; };' >"$obj/exports.map"
gcc -shared -Wl,--version-script="$obj/exports.map" -o "$obj/libktimer-oracle.so" "$obj/oracle.o" "$obj/shim.o" "$obj/host.o" \
	-Wl,-z,defs -Wl,-z,text -Wl,--defsym=jiffies=jiffies_64 -Wl,-soname,libktimer-oracle.so

# Instructions that fault or misbehave in user mode: interrupt flag
# changes, %gs-relative (per-CPU) accesses, and ud2 (BUG/WARN traps).
bad=$(objdump -d "$obj/libktimer-oracle.so" | awk '
	/^[0-9a-f]+ <.*>:/ { fn = $2 }
	/\t(cli|sti|pushf|pushfq|popf|popfq|ud2)( |$)|%gs:/ { print fn, $0 }' | head -20)
[ -z "$bad" ] || die "the library has instructions that fault in user mode (the shim's prelude.h must cover them):
$bad"

cp "$obj/libktimer-oracle.so" "$lib.tmp"
mv "$lib.tmp" "$lib"
cp "$shim/oracle.h" "$out/oracle.h"
secs=$(( $(date +%s) - start ))
cat >"$out/build-info.txt" <<INFO
release: $release
tree: $name
hz: $hz
key: $key
built: $(date -u +%Y-%m-%dT%H:%M:%SZ) in $secs s
INFO
say "built $lib ($release, $name) in $secs s"
