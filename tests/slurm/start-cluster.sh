#!/usr/bin/env bash
# Start a real single-node Slurm cluster on this machine (Debian slurm-wlm + munge, with
# accounting through slurmdbd on MariaDB so `sacct` works), for development and CI.
#
#   bash tests/slurm/start-cluster.sh          # install if needed, configure, start, check
#   bash tests/slurm/stop-cluster.sh           # stop every daemon it started
#
# Idempotent: daemons already running are left alone. Runs as root. Partitions: `cpu`
# (default) and `gpu`, on the same node, which carries features `cpu,gpu` and two fake GPUs
# (character devices, so `--gpus=1` jobs schedule and see CUDA_VISIBLE_DEVICES; there is no
# real GPU behind them).
set -euo pipefail

NODE=$(hostname -s)
CPUS=$(nproc)
MEM_MB=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
CLUSTER=sticky
DB_PASS=sticky-slurm-dev

log() { echo "[slurm-cluster] $*"; }

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local seconds=$1 what=$2; shift 2
  for _ in $(seq $((seconds * 4))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.25
  done
  log "timed out after ${seconds}s waiting for ${what}"
  return 1
}

install_packages() {
  local missing=()
  for cmd in slurmctld slurmd slurmdbd munged mysqld_safe; do
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd")
  done
  if ((${#missing[@]})); then
    log "installing slurm-wlm, slurmdbd, munge, mariadb-server (missing: ${missing[*]})"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq slurm-wlm slurmdbd munge mariadb-server >/dev/null
  fi
}

start_munge() {
  if ! [ -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
  fi
  chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  # munged runs as root here (--force); its folders must be owned by the same user.
  chown root:root /run/munge /var/log/munge /var/lib/munge
  if ! pgrep -x munged >/dev/null; then
    log "starting munged"
    munged --force
  fi
  wait_for 20 "munge" bash -c 'munge -n | unmunge'
}

start_mariadb() {
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
  if ! mysqladmin ping --silent >/dev/null 2>&1; then
    log "starting mariadb"
    (mysqld_safe --user=mysql >/dev/null 2>&1 &)
    wait_for 60 "mariadb" mysqladmin ping --silent
  fi
  mysql -u root <<SQL
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '${DB_PASS}';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
FLUSH PRIVILEGES;
SQL
}

write_configs() {
  mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/fakegpu
  for i in 0 1; do [ -e /run/fakegpu/gpu$i ] || mknod /run/fakegpu/gpu$i c 1 3; done
  cat > /etc/slurm/slurmdbd.conf <<CONF
AuthType=auth/munge
DbdHost=localhost
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=${DB_PASS}
StorageLoc=slurm_acct_db
LogFile=/var/log/slurm/slurmdbd.log
PidFile=/run/slurmdbd.pid
CONF
  chmod 600 /etc/slurm/slurmdbd.conf
  cat > /etc/slurm/slurm.conf <<CONF
ClusterName=${CLUSTER}
SlurmctldHost=${NODE}
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=600
KillWait=5
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
JobAcctGatherType=jobacct_gather/linux
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
GresTypes=gpu
NodeName=${NODE} CPUs=${CPUS} RealMemory=${MEM_MB} Gres=gpu:2 Feature=cpu,gpu State=UNKNOWN
PartitionName=cpu Nodes=${NODE} Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=${NODE} MaxTime=INFINITE State=UP
CONF
  echo "NodeName=${NODE} Name=gpu File=/run/fakegpu/gpu[0-1]" > /etc/slurm/gres.conf
}

start_slurm() {
  if ! pgrep -x slurmdbd >/dev/null; then
    log "starting slurmdbd"
    slurmdbd
  fi
  wait_for 60 "slurmdbd" sacctmgr -n show cluster
  if ! sacctmgr -n -P show cluster format=cluster | grep -qx "${CLUSTER}"; then
    sacctmgr -i add cluster "${CLUSTER}" >/dev/null
  fi
  if ! pgrep -x slurmctld >/dev/null; then
    log "starting slurmctld"
    slurmctld
  fi
  wait_for 60 "slurmctld" scontrol ping
  if ! pgrep -x slurmd >/dev/null; then
    log "starting slurmd"
    slurmd
  fi
  wait_for 60 "the node to register" bash -c "sinfo -h -n ${NODE} -o %T | grep -qvE 'unk|down|drain|inval'" || {
    scontrol update nodename="${NODE}" state=resume || true
    wait_for 30 "the node to become usable" bash -c "sinfo -h -n ${NODE} -o %T | grep -qE 'idle|mix|alloc'"
  }
}

smoke_test() {
  local id
  id=$(sbatch --parsable -p cpu --wrap true -o /dev/null)
  wait_for 60 "smoke job ${id} to be accounted" bash -c "sacct -n -X -P -j ${id} -o State | grep -q COMPLETED"
  log "ready: $(sinfo -h -o '%P %a %D %T' | tr '\n' ';') sacct works"
}

install_packages
start_munge
start_mariadb
write_configs
start_slurm
smoke_test
