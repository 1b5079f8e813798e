#!/usr/bin/env bash
# Slurm for real (docs/sweep.md, "Slurm"): installs Debian's slurm-wlm and munge if missing,
# runs a private one-node cluster on this machine (its own munged, slurmctld and slurmd, state
# and sockets under $NPUSIM_SLURM_DIR), submits a small sweep as a job array, waits for it,
# merges the shards and checks the result equals a local run of the same sweep.
# Idempotent: daemons already running from an earlier call are reused; the daemons this call
# started are stopped on exit. Exit 0 ok, 1 failure (a skip is a failure when the packages are
# installable; only a machine whose apt has no slurm-wlm skips, with exit 0 and a SKIP line).
set -euo pipefail
cd "$(dirname "$0")/.."
NPUSIM=$(realpath "${NPUSIM:-build/npusim}")
D=${NPUSIM_SLURM_DIR:-/tmp/npusim-slurm}
SWEEP=$(realpath tests/data/sweep_small.yaml)
[ -x "$NPUSIM" ] || { echo "test-slurm: $NPUSIM missing; run scripts/build.sh first" >&2; exit 1; }

# 1. Packages.
missing=()
for p in slurm-wlm munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq || true
  if ! apt-cache policy slurm-wlm | grep -q "Candidate: [0-9]"; then
    echo "test-slurm: SKIP: slurm-wlm is not installable from this machine's apt sources"
    exit 0
  fi
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# 2. A one-node cluster in $D.
mkdir -p "$D"/{state,spool,log}
chmod 700 "$D"
host=$(hostname -s)
cpus=$(nproc)
started=()
cleanup() {
  local rc=$?
  # Stop what this call started, newest first, and wait, so a next call finds the ports free.
  for ((i = ${#started[@]} - 1; i >= 0; i--)); do
    local pidfile=${started[i]} pid
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  [ $rc -eq 0 ] || { echo "test-slurm: FAILED; daemon logs in $D/log" >&2; tail -n 20 "$D"/log/*.log >&2 || true; }
  exit $rc
}
trap cleanup EXIT

cat > "$D/slurm.conf" <<CONF
# Written by scripts/test-slurm.sh: a private one-node cluster for npusim's sweep test.
ClusterName=npusim-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=${NPUSIM_SLURMCTLD_PORT:-6917}
SlurmdPort=${NPUSIM_SLURMD_PORT:-6918}
AuthType=auth/munge
AuthInfo=socket=$D/munge.socket
CredType=cred/munge
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SlurmdTimeout=60
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=npusim Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$D/slurm.conf"

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

if ! alive "$D/munged.pid"; then
  [ -f "$D/munge.key" ] || { dd if=/dev/urandom of="$D/munge.key" bs=1024 count=1 status=none; chmod 400 "$D/munge.key"; }
  munged --force --socket="$D/munge.socket" --key-file="$D/munge.key" --pid-file="$D/munged.pid" \
         --log-file="$D/log/munged.log" --seed-file="$D/munged.seed"
  started+=("$D/munged.pid")
fi
if ! alive "$D/slurmctld.pid"; then
  slurmctld -f "$SLURM_CONF"
  started+=("$D/slurmctld.pid")
fi
if ! alive "$D/slurmd.pid"; then
  slurmd -f "$SLURM_CONF"
  started+=("$D/slurmd.pid")
fi
# The daemons write their pid files once up; until then a stop would miss them.
for _ in $(seq 100); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
  case "$state" in idle*|mixed*|allocated*) break ;; esac
  [ "$state" = "down" ] || [ "$state" = "drained" ] && scontrol update nodename="$host" state=resume 2>/dev/null || true
  sleep 0.5
done
case "$state" in idle*|mixed*|allocated*) ;; *) echo "test-slurm: node $host not up (state '$state')" >&2; exit 1 ;; esac
echo "test-slurm: one-node cluster up on $host ($cpus CPUs), state in $D"

# 3. The sweep as a job array, then merged.
rm -rf "$D/out-slurm" "$D/out-local"
run_array() {
  local submit job
  submit=$("$NPUSIM" sweep "$SWEEP" --out "$D/out-slurm" --slurm --array-size 3)
  echo "$submit"
  job=$(sed -n 's/^submitted job \([0-9]*\).*/\1/p' <<<"$submit")
  [ -n "$job" ] || { echo "test-slurm: no job id in sbatch's answer" >&2; exit 1; }
  for _ in $(seq 600); do
    [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
    sleep 0.5
  done
  [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] || { echo "test-slurm: job $job still queued after 300 s" >&2; scancel "$job"; exit 1; }
}
run_array
"$NPUSIM" sweep-merge "$D/out-slurm"
# A re-submitted array skips what its shards recorded: still one record per point.
run_array
records=$(cat "$D"/out-slurm/shards/*.jsonl | wc -l)
[ "$records" -eq 6 ] || { echo "test-slurm: the re-submitted array left $records shard records, expected 6" >&2; exit 1; }
"$NPUSIM" sweep-merge "$D/out-slurm"

# The same sweep locally: the two must hold the same points (COUNT of them, all ok) with the same
# figures (FIELD... of each record's summary; a dotted name reaches into a block: llm.ttft_seconds).
same_as_local() {  # same_as_local COUNT WHAT FIELD...
  "$NPUSIM" sweep "$SWEEP" --out "$D/out-local" -j 2 --no-progress
  python3 - "$D/out-local/results.jsonl" "$D/out-slurm/results.jsonl" "$@" <<'PY'
import json, sys
local_path, slurm_path, count, what, *fields = sys.argv[1:]
def get(summary, dotted):
    for part in dotted.split("."):
        summary = (summary or {}).get(part)
    return summary
def figures(path):
    out = {}
    for line in open(path):
        r = json.loads(line)
        out[r["key"]] = (r["status"],) + tuple(get(r["summary"], f) for f in fields)
    return out
local, slurm = figures(local_path), figures(slurm_path)
if local != slurm or len(local) != int(count) or any(v[0] != "ok" for v in local.values()):
    print(f"test-slurm: the Slurm run of the {what} differs from the local run", file=sys.stderr)
    for k in sorted(set(local) | set(slurm)):
        print(" ", k, local.get(k), slurm.get(k), file=sys.stderr)
    sys.exit(1)
print(f"test-slurm: ok: {len(slurm)} {what} from the job array equal the local run")
PY
}

# 4. The classic sweep's figures.
same_as_local 6 "points" cycles energy_j area_mm2

# 5. A language-model sweep (each point an `npusim llm` run forking its phases) the same way.
SWEEP=$(realpath tests/data/sweep_llm_small.yaml)
rm -rf "$D/out-slurm" "$D/out-local"
run_array
"$NPUSIM" sweep-merge "$D/out-slurm"
same_as_local 4 "LLM points" llm.ttft_seconds llm.total_seconds llm.kv_cache_bytes
