#!/usr/bin/env bash
# Stop the single-node Slurm cluster started by start-cluster.sh (all of its daemons).
set -uo pipefail
DAEMONS=(slurmctld slurmd slurmdbd mariadbd mysqld munged)

running() {
  local name found=()
  for name in "${DAEMONS[@]}"; do
    pgrep -x "$name" >/dev/null && found+=("$name")
  done
  echo "${found[@]}"
}

scontrol shutdown >/dev/null 2>&1
pkill -x slurmd; pkill -x slurmdbd
mysqladmin shutdown >/dev/null 2>&1
pkill -x munged
for _ in $(seq 60); do
  [ -z "$(running)" ] && exit 0
  sleep 0.25
done
echo "[slurm-cluster] still running after 15 s: $(running)" >&2
exit 1
