#!/usr/bin/env bash
# cluster.sh -- a one-node Slurm cluster on this machine, for make
# test-slurm: munged, slurmctld and slurmd on localhost, one partition,
# debug, without GPUs.
#
#   tests/slurm/cluster.sh start    start what is not running (as root;
#                                   Debian's slurm-wlm and munge are
#                                   installed with apt-get when missing)
#   tests/slurm/cluster.sh stop     stop the Slurm daemons it started (by
#                                   their pid files; munged stays)
#   tests/slurm/cluster.sh status   the partition's state, or why there is none
#   tests/slurm/cluster.sh env      the line that points Slurm's commands at
#                                   it: export SLURM_CONF=...
#
# Its configuration, state and logs live in RL_SLURM_STATE (default
# /var/tmp/rooflab-slurm); /etc/slurm is not touched, so the commands need
# SLURM_CONF (the env line). Made for a container: no cgroups
# (proctrack/linuxproc, task/none), no accounting (sacct does not answer;
# squeue and scontrol do), everything as root, munge's key generated here
# when there is none. Exit codes: 0 done, 1 a daemon did not come up (its
# log's tail is printed), 2 bad usage, 77 not root, or no Slurm here.
set -uo pipefail
case "${1:-}" in
    start | stop | status | env) ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 start|stop|status|env (see --help)" >&2; exit 2 ;;
esac
STATE=${RL_SLURM_STATE:-/var/tmp/rooflab-slurm}
CONF=$STATE/slurm.conf
export SLURM_CONF=$CONF
HOST=$(hostname -s)

say() { echo "cluster: $*"; }
need_root() {
    [ "$(id -u)" = 0 ] || { echo "cluster: $1 needs root (it runs the Slurm daemons)" >&2; exit 77; }
}
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

install_if_missing() {
    command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null &&
        command -v sbatch >/dev/null && return 0
    say "installing slurm-wlm and munge (apt-get)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        slurm-wlm munge >/dev/null || {
        echo "cluster: apt-get install slurm-wlm munge failed" >&2
        exit 77
    }
}

start_munge() {
    if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
        return 0
    fi
    if [ ! -s /etc/munge/munge.key ]; then
        say "generating a munge key (/etc/munge/munge.key)"
        mkdir -p /etc/munge
        (umask 077 && dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none)
        chown munge:munge /etc/munge/munge.key
    fi
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge
    runuser -u munge -- /usr/sbin/munged || { echo "cluster: munged did not start" >&2; exit 1; }
    sleep 1
    munge -n | unmunge >/dev/null 2>&1 || { echo "cluster: munge does not answer" >&2; exit 1; }
}

write_config() {
    mkdir -p "$STATE/ctld" "$STATE/spool"
    local node
    # This machine as slurmd sees it (CPUs, sockets, memory): a node that
    # claims more than it has is drained.
    node=$(slurmd -C | head -n 1)
    cat >"$CONF.tmp" <<EOF
# Written by tests/slurm/cluster.sh: a one-node test cluster for make test-slurm.
ClusterName=rooflab-test
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
    mv "$CONF.tmp" "$CONF"
}

# Waits for the partition's node to take jobs; resumes it if Slurm has
# marked it down (a restart) or drained.
wait_ready() {
    local state
    for _ in $(seq 1 60); do
        state=$(sinfo -h -p debug -o '%T' 2>/dev/null | head -n 1)
        case $state in
            idle* | mixed* | allocated* | completing*) return 0 ;;
            down* | drain*) scontrol update nodename="$HOST" state=resume >/dev/null 2>&1 ;;
        esac
        sleep 0.5
    done
    return 1
}

show_log() { echo "--- $1 (last lines)"; tail -n 15 "$1" 2>/dev/null; }

case $1 in
    env) echo "export SLURM_CONF=$CONF" ;;
    status)
        if [ ! -f "$CONF" ]; then echo "cluster: not set up here (tests/slurm/cluster.sh start)"; exit 1; fi
        sinfo -p debug || exit 1
        ;;
    stop)
        need_root stop
        for d in slurmd slurmctld; do
            if alive "$STATE/$d.pid"; then kill "$(cat "$STATE/$d.pid")" && say "stopped $d"; fi
        done
        ;;
    start)
        need_root start
        install_if_missing
        start_munge
        [ -f "$CONF" ] && alive "$STATE/slurmctld.pid" && alive "$STATE/slurmd.pid" && wait_ready && {
            say "running ($CONF)"
            exit 0
        }
        write_config
        alive "$STATE/slurmctld.pid" || slurmctld -f "$CONF" || { show_log "$STATE/slurmctld.log"; exit 1; }
        alive "$STATE/slurmd.pid" || slurmd -f "$CONF" || { show_log "$STATE/slurmd.log"; exit 1; }
        if ! wait_ready; then
            echo "cluster: partition debug did not come up within 30 s" >&2
            show_log "$STATE/slurmctld.log"
            show_log "$STATE/slurmd.log"
            exit 1
        fi
        say "running: partition debug on $HOST ($CONF)"
        ;;
esac
