#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A throwaway one-node Slurm cluster on this machine, for testing the sbatch scripts in slurm/
# for real (tests/slurm/slurm_workload_test.sh) and for trying them by hand:
#
#   scripts/slurm-local-cluster.sh start DIR [CPUS [GPUS]]  # munged, slurmctld, slurmd
#   . DIR/env.sh                                       # SLURM_CONF (and MUNGE socket) for sbatch
#   scripts/slurm-local-cluster.sh stop DIR           # ends its jobs, then the daemons it started
#
# Everything (slurm.conf, munge key and socket, spool, state, logs, pid files) lives under DIR,
# so it never touches /etc/slurm or a system munged and can run beside a real cluster's daemons.
# Needs root (slurmd launches jobs as their user; munged and slurmd want root-owned state) and
# Debian's slurmd, slurmctld, slurm-client and munge (scripts/install-deps.sh --slurm). No systemd:
# the daemons are started directly. CPUS (default 4) is what the node declares; slurmd is told to
# believe slurm.conf rather than the hardware (SlurmdParameters=config_overrides), so a 4-task
# job runs on a 2-core CI machine, oversubscribed. GPUS (default 0) declares /dev/nvidia0.. as GRES
# gpu, so --gpus-per-task / --gpus-per-node work on a GPU machine. SLURM_PLUGIN_DIR, if set, is
# where Slurm's plugins are (a Slurm unpacked outside /usr).
# Exit codes of `start`: 0 up; 1 a daemon failed (logs printed); 77 this system cannot run them.
set -euo pipefail

readonly SKIP=77
die() { echo "slurm-local-cluster: $*" >&2; exit 1; }
skip() { echo "slurm-local-cluster: cannot run here: $*" >&2; exit "$SKIP"; }

# A TCP port nobody listens on, from /proc/net/tcp{,6} (no ss/netstat needed). Ports are taken
# from a range well above the defaults (6817/6818) so a real Slurm on this host is left alone.
port_in_use() {
  local hex
  hex=$(printf '%04X' "$1")
  cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v p=":$hex" '$2 ~ p"$" {found=1} END {exit !found}'
}
free_port() {
  local port tries=0
  while [ "$tries" -lt 200 ]; do
    port=$((20000 + RANDOM % 20000))
    if ! port_in_use "$port"; then echo "$port"; return 0; fi
    tries=$((tries + 1))
  done
  die "no free TCP port found"
}

# Waits up to $2 seconds for command $1 (a function name) to succeed.
wait_for() {
  local what=$1 limit=$2 waited=0
  while ! "$what"; do
    if [ "$waited" -ge "$limit" ]; then return 1; fi
    sleep 1
    waited=$((waited + 1))
  done
}

print_logs() {
  local f
  for f in "$dir"/log/*.log; do
    [ -f "$f" ] || continue
    echo "----- $f (last 40 lines)" >&2
    tail -n 40 "$f" >&2
  done
}

start() {
  local cpus=${1:-4} gpus=${2:-0}
  [ "$(id -u)" -eq 0 ] || skip "must run as root (slurmd starts jobs as their user)"
  export PATH=$PATH:/usr/sbin  # the daemons live there; not on every root PATH
  local tool
  for tool in munged slurmctld slurmd sbatch srun scontrol squeue sinfo; do
    command -v "$tool" >/dev/null 2>&1 ||
      skip "$tool not installed (scripts/install-deps.sh --slurm installs Debian's slurm-wlm and munge)"
  done

  mkdir -p "$dir"/{etc,log,run,spool/commprof-node,state,munge,pmix}
  dir=$(cd "$dir" && pwd)
  chmod 0700 "$dir/munge"
  local host ctld_port slurmd_port
  host=$(hostname -s)
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  [ "$ctld_port" != "$slurmd_port" ] || slurmd_port=$((ctld_port + 1))

  # munged: own key, socket and pid file; --force because it otherwise refuses a key and state
  # under a world-traversable /tmp path, which is fine for a throwaway test cluster.
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$dir/munge/munge.key"
  munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" ||
    { print_logs; skip "munged does not start"; }

  # Why each setting: root everywhere (no slurm user in containers); linuxproc and task/none need
  # no cgroups (CI containers rarely delegate them); no accounting daemon; state under DIR.
  cat >"$dir/etc/slurm.conf" <<EOF
# Written by scripts/slurm-local-cluster.sh: a one-node test cluster, state under $dir
ClusterName=commproftest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
NodeName=commprof-node NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=30 State=UP OverSubscribe=NO
EOF
  local gres_type="" gres_node=""
  if [ "$gpus" -gt 0 ]; then
    gres_type="GresTypes=gpu"
    gres_node="Gres=gpu:$gpus"
    echo "Name=gpu File=/dev/nvidia[0-$((gpus - 1))]" >"$dir/etc/gres.conf"
  fi
  {
    [ -z "$gres_type" ] || echo "$gres_type"
    [ -z "${SLURM_PLUGIN_DIR:-}" ] || echo "PluginDir=$SLURM_PLUGIN_DIR"
  } >"$dir/etc/extra.conf"
  if [ -s "$dir/etc/extra.conf" ]; then
    sed -i "s|^\(NodeName=.*\) State=UNKNOWN\$|\1${gres_node:+ $gres_node} State=UNKNOWN|" "$dir/etc/slurm.conf"
    echo "Include $dir/etc/extra.conf" >>"$dir/etc/slurm.conf"
  fi
  # The PMIx plugin's per-job client directories go under DIR too, not /tmp.
  echo "PMIxCliTmpDirBase=$dir/pmix" >"$dir/etc/mpi.conf"
  cat >"$dir/env.sh" <<EOF
# Source this to talk to the test cluster under $dir
export SLURM_CONF=$dir/etc/slurm.conf
export PATH=\$PATH:/usr/sbin
EOF
  export SLURM_CONF=$dir/etc/slurm.conf

  # -i: ignore state from a previous run; -c: clear the job queue.
  # A daemon that fails leaves none of the others running behind it.
  slurmctld -i -c || { print_logs; stop; die "slurmctld did not start"; }
  slurmd -N commprof-node || { print_logs; stop; die "slurmd did not start"; }

  node_idle() { sinfo -h -N -o '%T' 2>/dev/null | grep -qx idle; }
  if ! wait_for node_idle 30; then
    print_logs
    sinfo -N -l >&2 || true
    stop
    die "node commprof-node is not idle after 30 s"
  fi
  echo "slurm-local-cluster: up under $dir (SLURM_CONF=$SLURM_CONF, $cpus CPUs, $gpus GPUs)"
}

# Kills one daemon by its pid file, politely then firmly; a stale pid file is just removed.
stop_daemon() {
  local pidfile=$1 pid waited=0
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 10 ]; do sleep 1; waited=$((waited + 1)); done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

# Processes left from this cluster's jobs: slurmstepd and job processes carry this cluster's
# SLURM_CONF in their environment (slurmd's, or the submitter's through sbatch --export=ALL), and
# job processes also a SLURM_JOB_ID. A shell that merely sourced env.sh matches neither test.
job_leftovers() {
  local environ pid vars
  for environ in /proc/[0-9]*/environ; do
    pid=${environ#/proc/}
    pid=${pid%/environ}
    [ "$pid" != "$$" ] || continue
    vars=$(tr '\0' '\n' 2>/dev/null <"$environ") || continue  # gone, or a kernel thread
    grep -qxF "SLURM_CONF=$dir/etc/slurm.conf" <<<"$vars" || continue
    if grep -q '^SLURM_JOB_ID=' <<<"$vars" || [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmstepd ]; then
      echo "$pid"
    fi
  done
}

stop() {
  # Jobs first, while the controller can still end them cleanly; then slurmd, the controller,
  # and munge which both use. Whatever of the jobs survives that is killed last.
  if [ -f "$dir/run/slurmctld.pid" ]; then
    SLURM_CONF=$dir/etc/slurm.conf timeout 10 scancel --quiet --partition=debug 2>/dev/null || true
  fi
  stop_daemon "$dir/run/slurmd.pid"
  stop_daemon "$dir/run/slurmctld.pid"
  stop_daemon "$dir/run/munged.pid"
  local pid
  for pid in $(job_leftovers); do kill -KILL "$pid" 2>/dev/null || true; done
}

[ $# -ge 2 ] || { echo "usage: $0 start DIR [CPUS [GPUS]] | stop DIR" >&2; exit 2; }
cmd=$1
dir=$2
shift 2
case "$cmd" in
  start) start "$@" ;;
  stop) stop ;;
  *) echo "usage: $0 start DIR [CPUS [GPUS]] | stop DIR" >&2; exit 2 ;;
esac
