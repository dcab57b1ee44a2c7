#!/usr/bin/env bash
# make test-cluster: run a sharded comparison on a real, one-node Slurm
# cluster and check that it prints what the comparison run locally prints.
#
#   1. installs Slurm and MUNGE from Debian packages when missing (slurm-wlm,
#      munge; apt-get, as root);
#   2. starts munged, slurmctld and slurmd on this machine with a generated
#      slurm.conf made for a container: no cgroups (ProctrackType=
#      proctrack/linuxproc, TaskPlugin=task/none), no accounting, every file
#      (key, sockets, state, logs) under one temporary directory, ports
#      $TICKEMU_SLURM_PORTS (default 16817-16818) so that no system Slurm is
#      touched;
#   3. writes the job with `tickemu compare ... --emit slurm --shards 3`,
#      submits it (`bash job.sbatch`: the array and the merge job), waits for
#      it, and compares RESULTS/compare.txt and the HTML report
#      RESULTS/compare.html with the local `tickemu compare --report` byte
#      for byte, and the bench format of a merge of the cluster's shards with
#      the local bench output;
#   4. stops the daemons (also on failure or interrupt) and prints how long
#      the set-up and the run took.
#
# Every wait has a bound ($TICKEMU_CLUSTER_TIMEOUT seconds for the job,
# default 600); on a failure the daemons' and jobs' logs are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tickemu=$root/bin/tickemu
timeout_s=${TICKEMU_CLUSTER_TIMEOUT:-600}
ports=${TICKEMU_SLURM_PORTS:-16817-16818}
ctld_port=${ports%-*}
slurmd_port=${ports#*-}

# The experiment: a shipped scenario, two variants, a sweep and three seeds
# (12 runs), in 3 shards.
config=$root/configs/hang-timermix.hcl
experiment=(--variants fixed_100ms,max_hang_time --sweep run.duration=100ms,200ms --seeds 3)
shards=3

t0=$(date +%s.%N)
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
log() { echo "test-cluster: $*"; }
fail() {
	echo "test-cluster: FAILED: $*" >&2
	for f in "$work"/munge/munged.log "$work"/slurmctld.log "$work"/slurmd.log "$work"/results/*.log; do
		[ -f "$f" ] || continue
		echo "---- $f (last 30 lines)" >&2
		tail -n 30 "$f" >&2
	done
	exit 1
}

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
	if [ "$(id -u)" != 0 ]; then
		echo "test-cluster: Slurm is not installed and installing it needs root: apt-get install slurm-wlm munge" >&2
		exit 1
	fi
	log "installing slurm-wlm and munge (Debian packages)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi
t_install=$(elapsed "$t0")

work=$(mktemp -d /tmp/tickemu-cluster.XXXXXX)
chmod 700 "$work"
pids=()
cleanup() {
	status=$?
	if [ -n "${SLURM_CONF:-}" ] && command -v scancel >/dev/null; then
		timeout 10 scancel --quiet --full --user "$(id -un)" 2>/dev/null || true
	fi
	for p in "$work"/slurmd.pid "$work"/slurmctld.pid "$work"/munge/munged.pid; do
		[ -f "$p" ] || continue
		pid=$(cat "$p")
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
	done
	if [ "$status" = 0 ] && [ -z "${TICKEMU_CLUSTER_KEEP:-}" ]; then
		rm -rf "$work"
	else
		echo "test-cluster: files kept in $work" >&2
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

host=$(hostname -s)
ncpu=$(nproc)

# MUNGE with its own key, socket and files.
mkdir -m 700 "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
munged --force --key-file="$work/munge/munge.key" --socket="$work/munge/munge.socket" \
	--pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" \
	--seed-file="$work/munge/munged.seed" || fail "munged did not start"

mkdir -p "$work/state" "$work/spool" "$work/results"
cat >"$work/slurm.conf" <<EOF
ClusterName=tickemu-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
# A container has no cgroup hierarchy to give Slurm: track processes by
# their parent and bind no tasks.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
# A merge whose shards failed can never run: end it instead of waiting.
DependencyParameters=kill_invalid_depend
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$ncpu State=UNKNOWN
PartitionName=tickemu Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$work/slurm.conf

slurmctld -i || fail "slurmctld did not start"
slurmd -N "$host" || fail "slurmd did not start"
up=""
for _ in $(seq 120); do
	state=$(timeout 5 sinfo -h -n "$host" -o %t 2>/dev/null || true)
	case $state in
	idle*|mix*|alloc*) up=1; break ;;
	esac
	sleep 0.5
done
[ -n "$up" ] || fail "the node did not come up within 60 s (sinfo: ${state:-no answer})"
t_setup=$(elapsed "$t0")
log "Slurm up: install $t_install s, cluster set-up $(awk -v a="$t_setup" -v b="$t_install" 'BEGIN { printf "%.1f", a - b }') s"

# The job, as a user would write and submit it.
"$tickemu" compare "$config" "${experiment[@]}" --emit slurm --shards $shards --results "$work/results" >"$work/job.sbatch" ||
	fail "tickemu compare --emit slurm"
t_submit=$(date +%s.%N)
(cd "$work" && bash job.sbatch) | tee "$work/submit.out" || fail "submitting the job"
deadline=$(($(date +%s) + timeout_s))
while [ -n "$(timeout 10 squeue -h -o %i 2>/dev/null || echo busy)" ]; do
	[ "$(date +%s)" -lt "$deadline" ] || fail "the job did not end within $timeout_s s: $(squeue 2>&1)"
	sleep 1
done
t_run=$(elapsed "$t_submit")
[ -s "$work/results/compare.txt" ] || fail "the merge job wrote no compare.txt (a shard failed?)"
log "job done in $t_run s (array of $shards shards and merge)"

# The same comparison, locally.
"$tickemu" compare "$config" "${experiment[@]}" --report "$work/local.html" >"$work/local.txt" || fail "local compare"
cmp "$work/local.txt" "$work/results/compare.txt" || {
	diff "$work/local.txt" "$work/results/compare.txt" | head -40 >&2
	fail "the cluster's merged comparison differs from the local one"
}
cmp "$work/local.html" "$work/results/compare.html" || fail "the cluster's HTML report differs from the local one"
shard_files=()
for i in $(seq $shards); do shard_files+=("$work/results/shard-$i.json"); done
"$tickemu" merge --format bench "${shard_files[@]}" >"$work/cluster.bench" || fail "tickemu merge --format bench"
"$tickemu" compare "$config" "${experiment[@]}" --format bench >"$work/local.bench" || fail "local compare --format bench"
cmp "$work/local.bench" "$work/cluster.bench" || fail "the bench output of the cluster's shards differs from the local one"
log "PASS: the merged comparison of $shards Slurm array tasks equals the local compare (text, HTML report and bench), byte for byte"
log "timings: install $t_install s, set-up $t_setup s in all, job $t_run s, total $(elapsed "$t0") s"
