#!/usr/bin/env bash
# Start a private SLURM 22.05 cluster on this machine: munged, slurmctld and NNODES virtual
# nodes (one `slurmd -N nX` each), everything under one directory, on free private ports, with a
# private munge socket; nothing in /etc is read or written. Needs root (the daemons run as root).
#
#   tests/slurm/slurm-local-up.sh BASE_DIR        then: source BASE_DIR/env.sh  (SLURM_CONF)
#   tests/slurm/slurm-local-down.sh BASE_DIR      stops exactly what this started, by PID
#
# Environment: NNODES (4), CPUS_PER_NODE (8: declared, more than the host has, so 1, 2, 4 and
# 8 tasks per node can be swept oversubscribed), MEM_PER_NODE_MB (4000), SLURM_LOCAL_WAIT_S (60:
# how long to wait for every node to be idle). On failure it prints the daemons' logs, stops
# whatever it started and exits 1.
# Why each non-default setting is there: the comment block above slurm.conf below.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
B=${1:-${SLURM_LOCAL_BASE:-}}
[ -n "$B" ] || { echo "usage: $0 BASE_DIR (a private directory)" >&2; exit 2; }
mkdir -p "$B"; B=$(cd "$B" && pwd)
NNODES=${NNODES:-4} CPUS=${CPUS_PER_NODE:-8} MEM=${MEM_PER_NODE_MB:-4000} WAIT_S=${SLURM_LOCAL_WAIT_S:-60}

say() { echo "slurm-local-up: $*"; }
die() { echo "slurm-local-up: error: $*" >&2; exit 1; }

missing=()
for c in munged mungekey munge unmunge slurmctld slurmd sinfo scontrol; do
  command -v "$c" >/dev/null || [ -x "/usr/sbin/$c" ] || missing+=("$c")
done
[ ${#missing[@]} = 0 ] ||
  die "missing ${missing[*]}: install slurm-wlm and munge (scripts/install-deps.sh does)"
export PATH=$PATH:/usr/sbin:/sbin
[ "$(id -u)" = 0 ] || die "the local cluster runs its daemons as root; run as root"

alive() { [ -f "$1" ] && grep -qs '^State:[[:space:]]*[^Z]' "/proc/$(cat "$1")/status"; }
for f in "$B"/munge/munged.pid "$B"/run/*.pid; do
  ! alive "$f" || die "a cluster is already running under $B ($f); run slurm-local-down.sh $B first"
done

# --- free private ports: slurmctld, the global SlurmdPort and one per virtual node ---
used=$(ss -Htan 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }' | sort -u)
port=""
for _ in $(seq 1 50); do
  p=$((20000 + (RANDOM * 32768 + RANDOM) % 35000))
  ok=1
  for q in $(seq "$p" $((p + NNODES + 1))); do grep -qx "$q" <<<"$used" && { ok=0; break; }; done
  [ $ok = 1 ] && { port=$p; break; }
done
[ -n "$port" ] || die "found no $((NNODES + 2)) free consecutive TCP ports"
CTLD_PORT=$port SLURMD_PORT=$((port + 1)) NODE_PORT0=$((port + 2))
CLUSTER=sp$port                          # also names the per-cluster /dev/shm folder
SHM=/dev/shm/spslurm-$CLUSTER
H=$(hostname -s)

mkdir -p "$B"/{etc,log,run,state,munge}
rm -rf "$B"/state/* "$B"/log/* "$B"/spool "$B"/tmp   # fresh controller state on every start
chmod 755 "$B" "$B/munge"                # munged: the socket's folder needs o+x ...
d=$(dirname "$B")                        # ... and so does every folder above it
while [ "$d" != / ]; do
  [ "$(( $(stat -c '%#a' "$d") & 1 ))" = 1 ] || die "munged needs o+x on every folder above its socket: chmod o+x $d (or use another base)"
  d=$(dirname "$d")
done
for i in $(seq 1 "$NNODES"); do mkdir -p "$B/spool/n$i" "$B/tmp/n$i"; done
cat >"$B/cluster.env" <<EOF
CLUSTER=$CLUSTER
SHM=$SHM
CTLD_PORT=$CTLD_PORT
NNODES=$NNODES
EOF
cat >"$B/env.sh" <<EOF
export SLURM_CONF=$B/etc/slurm.conf
EOF

# From here on a failure stops whatever was started.
fail() {
  echo "slurm-local-up: error: $*" >&2
  echo "---- sinfo" >&2; timeout 10 sinfo >&2 2>&1 || true
  for f in "$B"/munge/munged.log "$B"/log/*; do
    [ -f "$f" ] && { echo "---- $f (last 30 lines)" >&2; tail -n 30 "$f" >&2; }
  done
  bash "$HERE/slurm-local-down.sh" "$B" >&2 || true
  exit 1
}

# --- munge: private key, socket, pid and log ---
[ -f "$B/munge/munge.key" ] || { mungekey --create --keyfile="$B/munge/munge.key" && chmod 400 "$B/munge/munge.key"; } ||
  fail "mungekey failed"
munged --origin=127.0.0.1 --socket="$B/munge/munge.socket" --key-file="$B/munge/munge.key" \
       --pid-file="$B/munge/munged.pid" --log-file="$B/munge/munged.log" --seed-file="$B/munge/munged.seed" \
       </dev/null >"$B/log/munged.out" 2>&1 || fail "munged did not start: $(cat "$B/log/munged.out")"
timeout 10 bash -c "munge -S '$B/munge/munge.socket' -n | unmunge -S '$B/munge/munge.socket'" >/dev/null 2>&1 ||
  fail "munge credentials do not round-trip through $B/munge/munge.socket"

# --- TaskProlog: Open MPI settings for every task (stdout "export NAME=value" lines) ---
cat >"$B/etc/taskprolog.sh" <<EOF
#!/bin/bash
# Open MPI as root, and yielding when idle: the nodes declare more CPUs than the host has.
echo "export OMPI_ALLOW_RUN_AS_ROOT=1"
echo "export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
echo "export OMPI_MCA_mpi_yield_when_idle=1"
# Open MPI's TCP (BTL and out-of-band) on loopback only.
echo "export OMPI_MCA_btl_tcp_if_include=lo"
echo "export OMPI_MCA_oob_tcp_if_include=lo"
# Job steps only (the batch step has no SLURM_STEP_ID; mpirun would forward its values to every
# node): a shared-memory folder per virtual node of this cluster, since all virtual nodes share
# one hostname and Open MPI names its segments after it; and a private ORTE session folder.
[ -n "\$SLURM_STEP_ID" ] || exit 0
d=$SHM/\$SLURMD_NODENAME
mkdir -p "\$d"
echo "export OMPI_MCA_btl_vader_backing_directory=\$d"
echo "export OMPI_MCA_orte_tmpdir_base=$B/tmp/\$SLURMD_NODENAME"
EOF
chmod 755 "$B/etc/taskprolog.sh"

# --- slurm.conf ---
# Each non-default line fixed a failure met when bringing SLURM 22.05 up on a 2-core Debian 12 VM:
#  SlurmdSpoolDir/TmpFS/SlurmdPidFile with %n: every virtual node needs its own (PMIx creates its
#    client folder under TmpFS: "pmixp_mkdir ... File exists" and a failed launch without it);
#  SlurmdParameters=config_overrides + Sockets/CoresPerSocket/ThreadsPerCore: declare more CPUs
#    than the host has without the node going INVAL ("Low socket*core*thread count");
#  MpiDefault=pmix: Debian's Open MPI has no PMI2, so plain srun must use PMIx;
#  MinJobAge=4: finished jobs leave the queue in seconds (the default 300 keeps them for minutes);
#  SchedulerParameters sched_interval=2,bf_interval=1: pending jobs (array tasks, a dependency just
#    satisfied) start within seconds; the defaults (60 s, 30 s) left the 2-core sweep idle most of
#    its time;
#  KillWait=5: a job past its time limit is killed 5 s after SIGTERM instead of 30;
#  EnforcePartLimits=ALL: an impossible request fails at sbatch instead of pending forever;
#  DependencyParameters=kill_invalid_depend: an afterok job of a failed job is cancelled, not
#    left pending forever (note: sbatch --wait then returns 0 for it);
#  MailProg=/bin/true: silences "Configured MailProg is invalid";
#  FirstJobId random: job ids differ from those of another local cluster on the same host;
#  SlurmctldHost=<host>(127.0.0.1), NodeAddr=127.0.0.1, munged --origin: work without DNS;
#  ProctrackType=linuxproc, TaskPlugin=none: no cgroups needed.
cat >"$B/etc/slurm.conf" <<EOF
# Private local cluster written by tests/slurm/slurm-local-up.sh
ClusterName=$CLUSTER
SlurmctldHost=$H(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
AuthInfo=socket=$B/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$B/state
SlurmdSpoolDir=$B/spool/%n
TmpFS=$B/tmp/%n
SlurmctldPidFile=$B/run/slurmctld.pid
SlurmdPidFile=$B/run/slurmd-%n.pid
SlurmctldLogFile=$B/log/slurmctld.log
SlurmdLogFile=$B/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2,bf_interval=1
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmdParameters=config_overrides
MailProg=/bin/true
MinJobAge=4
KillWait=5
EnforcePartLimits=ALL
DependencyParameters=kill_invalid_depend
FirstJobId=$((1000 + RANDOM % 900 * 1000))
TaskProlog=$B/etc/taskprolog.sh
NodeName=n[1-$NNODES] NodeHostname=$H NodeAddr=127.0.0.1 Port=[$NODE_PORT0-$((NODE_PORT0 + NNODES - 1))] Sockets=1 CoresPerSocket=$CPUS ThreadsPerCore=1 RealMemory=$MEM State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$B/etc/slurm.conf

# --- daemons (each daemonizes itself and writes its pid file) ---
slurmctld -f "$SLURM_CONF" </dev/null >"$B/log/slurmctld.out" 2>&1 ||
  fail "slurmctld did not start: $(cat "$B/log/slurmctld.out")"
for i in $(seq 1 "$NNODES"); do
  slurmd -f "$SLURM_CONF" -N "n$i" </dev/null >"$B/log/slurmd-n$i.out" 2>&1 ||
    fail "slurmd -N n$i did not start: $(cat "$B/log/slurmd-n$i.out")"
done

# --- wait (bounded) until every node is idle ---
deadline=$((SECONDS + WAIT_S))
while [ $SECONDS -lt $deadline ]; do
  if [ "$(timeout 10 sinfo -h -o '%t %D' 2>/dev/null)" = "idle $NNODES" ]; then
    say "cluster $CLUSTER up: $NNODES nodes x $CPUS CPUs, slurmctld port $CTLD_PORT, base $B"
    timeout 10 sinfo
    exit 0
  fi
  sleep 0.2
done
fail "the $NNODES nodes did not all become idle within ${WAIT_S}s"
