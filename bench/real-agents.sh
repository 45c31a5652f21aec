#!/usr/bin/env bash
# Real agents at scale (issue #11): one coordinator and N real `jetfleet-agent --platform
# sim:agx-xavier` processes on this machine, each with its own state directory and its trainer
# child per run, run a sweep of R runs per board (lenet5/mnist, E epochs, telemetry at HZ). Where
# bench/fleet-scale.sh speaks the protocol from one light process, this runs the real agent and
# trainer: run it with N rising to find how many this machine holds. Prints name=value figures
# (definitions in bench/README.md, "real-agents.sh"); everything runs on 127.0.0.1 and is
# removed at the end unless --keep.
#   bench/real-agents.sh [--agents N] [--runs R] [--epochs E] [--hz HZ] [--sim-speed S]
#                        [--workload MODEL-DATASET] [--agents-nice NICE] [--timeout SECONDS]
#                        [--bin-dir DIR] [--keep]
#          (defaults 50, 2, 2, 10, 1, lenet5-mnist, 0, 900; --bin-dir: else build-bench/ is built)
# The workload sets the records' rate: a simulated AGX Xavier trains LeNet-5 at about 250
# minibatches a second, each a record the agent spools and streams; ResNet-18 at far fewer.
# --agents-nice starts the agents (and so their trainers) at that niceness: on one machine the
# coordinator otherwise gets a fair share among hundreds of busy processes, where in a lab it has
# a workstation of its own.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/bench-bin.sh
. "$top/bench/bench-bin.sh"
agents=50 runs=2 epochs=2 hz=10 speed=1 timeout=900 bin="" keep=0 nice=0 workload=lenet5-mnist
while [ $# -gt 0 ]; do
  case "$1" in
    --agents) agents=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --hz) hz=$2; shift 2 ;;
    --sim-speed) speed=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --agents-nice) nice=$2; shift 2 ;;
    --workload) workload=$2; shift 2 ;;
    --bin-dir) bin=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--agents N] [--runs R] [--epochs E] [--hz HZ] [--sim-speed S]" \
            "[--workload MODEL-DATASET] [--agents-nice NICE] [--timeout SECONDS]" \
            "[--bin-dir DIR] [--keep]" >&2; exit 2 ;;
  esac
done
bin=$(bench_bin_dir "$bin")
work=$(mktemp -d "${TMPDIR:-/tmp}/jf-agents.XXXXXX")
pids=()
cleanup() {
  # TERM, and up to 60 s for the agents (hundreds, on a loaded machine) to stop their trainers.
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for _ in $(seq 120); do
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1 && break; done
    [ "$alive" = 1 ] || break
    sleep 0.5
  done
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "$keep" = 1 ]; then echo "kept=$work"; else rm -rf "$work"; fi
}
trap cleanup EXIT INT TERM

mkdir -p "$work/data" "$work/tmp"
{
  echo "coordinator:"
  echo "  agent_endpoint: tcp://127.0.0.1:*"
  echo "  data_dir: $work/state"
  echo "  telemetry_hz: $hz"
  echo "boards:"
  for i in $(seq -f '%04g' 1 "$agents"); do
    echo "  - {name: ra-$i, type: sim, simulates: agx-xavier,"
    echo "     storage: [{medium: nvme, mount: /, dataset_root: $work/data}]}"
  done
} > "$work/fleet.yaml"
cat > "$work/sweep.yaml" <<YAML
name: agents
description: "bench/real-agents.sh: $runs runs per board"
target: {device_types: [agx-xavier]}
workloads: [{model: ${workload%%-*}, dataset: ${workload#*-}, epochs: $epochs}]
power_modes: [MAXN]
storage: [nvme]
workers: [0]
batch_sizes: [16]
repeats: $runs
YAML
export JETFLEET_CONFIG=$work/fleet.yaml
ulimit -n "$(ulimit -Hn)"
"$bin/jetfleet-coordinator" --config "$work/fleet.yaml" --insecure-loopback \
  > "$work/coordinator.log" 2>&1 &
coord=$!
pids+=("$coord")
for _ in $(seq 300); do [ -s "$work/state/endpoint" ] && break; sleep 0.1; done
if [ ! -s "$work/state/endpoint" ]; then
  echo "real-agents: the coordinator did not start; its log:" >&2
  tail -n 20 "$work/coordinator.log" >&2
  exit 1
fi
endpoint=$(cat "$work/state/endpoint")

online_count() { "$bin/jetfleet" status 2>/dev/null | awk '$3 == "yes"' | wc -l; }
t0=$(date +%s.%N)
for i in $(seq -f '%04g' 1 "$agents"); do
  # TMPDIR: each sim agent's fake sysfs tree goes in the work directory, removed at the end.
  TMPDIR=$work/tmp nice -n "$nice" "$bin/jetfleet-agent" --coordinator "$endpoint" \
    --name "ra-$i" --config "$work/fleet.yaml" --platform sim:agx-xavier \
    --sim-speed "$speed" --sim-seed "$((10#$i))" \
    --state-dir "$work/agent-$i" --insecure-loopback > "$work/agent-$i.log" 2>&1 &
  pids+=($!)
done
online=0
for _ in $(seq 600); do
  online=$(online_count)
  [ "$online" -ge "$agents" ] && break
  sleep 0.2
done
online_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')

# While the sweep runs: every 5 s the resident memory of the agents, of their trainers and of
# the coordinator, and the boards online; the peaks (and the fewest online) are printed. The
# machine's CPU time busy over the sweep comes from /proc/stat.
cpu_busy() {
  awk '/^cpu / {print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8}' /proc/stat
}
# Trainers are jetfleet-train or, on sim boards, jetfleet-train-sim.
sample() {
  local a t c
  a=$(ps -e -o rss=,comm= | awk '$2 == "jetfleet-agent" {s += $1} END {print s + 0}')
  t=$(ps -e -o rss=,comm= | awk '$2 ~ /^jetfleet-train/ {s += $1; n++} END {print s + 0, n + 0}')
  c=$(awk '/^VmRSS/ {print $2}' "/proc/$coord/status" 2>/dev/null || echo 0)
  echo "$a $t $c $(online_count)"
}
( set +e; while kill -0 "$coord" 2>/dev/null; do sample; sleep 5; done ) \
  > "$work/samples.txt" 2>/dev/null &
sampler=$!
s0=$(date +%s.%N)
read -r busy0 all0 < <(cpu_busy)
rc=0
"$bin/jetfleet" sweep submit "$work/sweep.yaml" --wait --timeout "$timeout" \
  > "$work/submit.out" 2>&1 || rc=$?
if [ "$rc" != 0 ]; then
  echo "real-agents: jetfleet sweep submit --wait exited $rc:" >&2
  tail -n 5 "$work/submit.out" >&2
fi
sweep_s=$(awk -v a="$s0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
read -r busy1 all1 < <(cpu_busy)
kill "$sampler" 2>/dev/null || true
wait "$sampler" 2>/dev/null || true
# The coordinator's loop thread: time on a CPU and time runnable but waiting for one (the
# kernel's schedstat, ns), since its start.
read -r cpu_ns wait_ns _ < "/proc/$coord/task/$coord/schedstat"
kill -TERM "$coord"
wait "$coord" || true
pids=("${pids[@]:1}")

db=$(find "$work/state" -name '*.db' | head -n 1)
q() { sqlite3 "$db" "$1"; }
expected=$(( agents * runs ))
total=$(q "SELECT count(*) FROM runs")
if [ "$total" = 0 ]; then
  echo "real-agents: no run was submitted (the sweep's error is above): nothing measured" >&2
  exit 1
fi
done_runs=$(q "SELECT count(*) FROM runs WHERE state = 'done'")
failed=$(q "SELECT count(*) FROM runs WHERE state = 'failed'")
stuck=$(q "SELECT count(*) FROM runs WHERE state IN ('pending', 'assigned', 'running')")
# As tests/support/jft_sweep.c: run.done beyond one per run, runs run more than once; done runs'
# epochs not stored, done runs without telemetry.
dups=$(q "SELECT (SELECT count(*) FROM events WHERE kind = 'run.done') -
                 (SELECT count(DISTINCT run) FROM events WHERE kind = 'run.done') +
                 (SELECT count(*) FROM runs WHERE attempt > 1)")
missing=$(q "SELECT coalesce(sum(r.epochs - (SELECT count(*) FROM epochs e WHERE e.run = r.id
               AND e.attempt = r.attempt)), 0) + (SELECT count(*) FROM runs r2 WHERE
               r2.state = 'done' AND NOT EXISTS (SELECT 1 FROM telemetry m WHERE m.run = r2.id
               AND m.attempt = r2.attempt)) FROM runs r WHERE r.state = 'done'")
samples=$(q "SELECT count(*) FROM telemetry")
# Samples stored per second of the runs (started to finished): HZ when the agents kept up.
run_s=$(q "SELECT coalesce(sum(finished_us - started_us), 0) / 1e6 FROM runs WHERE state = 'done'")
offline=$(grep -c "registry: board '.*' offline" "$work/coordinator.log" || true)
integrity=$(q "PRAGMA integrity_check" | head -n 1)
peak() { awk -v k="$1" '$k > m {m = $k} END {print m + 0}' "$work/samples.txt"; }
min_online=$(awk 'NR == 1 || $5 < m {m = $5} END {print m + 0}' "$work/samples.txt")
echo "agents=$agents workload=$workload online=$online online_s=$online_s runs=$expected" \
     "done_runs=$done_runs failed_runs=$failed" \
     "stuck_runs=$stuck lost_runs=$(( expected - total + failed ))" \
     "duplicate_results=$dups missing_samples=$missing integrity_check=$integrity"
echo "sweep_s=$sweep_s submit_rc=$rc samples=$samples" \
     "samples_per_s=$(awk -v n="$samples" -v s="$sweep_s" 'BEGIN {printf "%.0f", n / s}')" \
     "offline_events=$offline min_online=$min_online agents_nice=$nice" \
     "run_hz=$(awk -v n="$samples" -v s="$run_s" 'BEGIN {printf "%.1f", (s > 0) ? n / s : 0}')"
mean=$(awk -v a="$(peak 1)" -v n="$agents" 'BEGIN {printf "%.1f", a / n / 1024}')
echo "agents_rss_mb_peak=$(( $(peak 1) / 1024 )) agent_rss_mb_mean=$mean" \
     "trainers_rss_mb_peak=$(( $(peak 2) / 1024 )) trainers_peak=$(peak 3)" \
     "coordinator_rss_mb_peak=$(( $(peak 4) / 1024 ))" \
     "cpu_busy_pct=$(( 100 * (busy1 - busy0) / (all1 - all0 > 0 ? all1 - all0 : 1) ))"
echo "coordinator_cpu_s=$(awk -v n="$cpu_ns" 'BEGIN {printf "%.1f", n / 1e9}')" \
     "coordinator_cpu_wait_s=$(awk -v n="$wait_ns" 'BEGIN {printf "%.1f", n / 1e9}')"
# The coordinator's part of redispatch (a run's end read to the next run.assign sent), from its
# summaries (every minute and at exit): their count and the largest p99 and max among them.
awk '/server: redispatch n=/ {
       for (i = 1; i <= NF; i++) {
         split($i, kv, "="); if (kv[1] == "n") n += kv[2];
         if (kv[1] == "p99_ms" && kv[2] > p) p = kv[2]
         if (kv[1] == "max_ms" && kv[2] > m) m = kv[2]
       }
     }
     END {printf "coord_redispatch_n=%d coord_redispatch_p99_ms_max=%s", n, p + 0
          printf " coord_redispatch_max_ms=%s\n", m + 0}' \
  "$work/coordinator.log"
