#!/bin/bash
# Federated rounds at fleet size (issue #14, docs/rounds.md): its own coordinator and 15
# simulated agents (5 AGX Xavier + 5 Xavier NX + 5 Nano) on this machine, every board profiled
# first through `jetfleet rounds plan` (adaptive custom-point sweeps, fitted models), then the
# same rounds run under maxn and under equal-finish (real LeNet-5 training on MNIST shards).
# Prints name=value lines: per policy the mean over its rounds of the finish-time spread (% of
# the round time) and the total energy of its rounds (training + idle at the barrier with the
# idle power below), all the simulator's modelled figures (docs/simulator.md), not wall clock.
# Builds nothing: uses build/bin (or $1). Usage: bench/rounds.sh [build-dir]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/${1:-build}/bin
for p in jetfleet jetfleet-coordinator jetfleet-agent jetfleet-datagen; do
  [ -x "$bin/$p" ] || { echo "rounds.sh: $bin/$p missing: build first" >&2; exit 1; }
done
run=$(mktemp -d /tmp/jf-rounds-bench.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
  done
  [ -n "${KEEP:-}" ] || rm -rf "$run"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

rounds=${ROUNDS:-3}
minibatches=${MINIBATCHES:-50}
types=(agx-xavier xavier-nx nano)
short=(agx nx nano)
# The full-size synthetic MNIST (60,000 samples): each of the 15 boards trains on its own shard
# of 4,000, which the simulator models at --sim-scale 0.5 as 2,000 samples (62 minibatches of
# 32): the local work of a round (50 minibatches) fits, so every board trains all the
# minibatches the plan gives it.
"$bin/jetfleet-datagen" --kind mnist --scale 1 --seed 1 --out "$run/data/mnist" > /dev/null
{
  echo "coordinator:"
  echo "  agent_endpoint: ipc://$run/agents.sock # this bench's own fleet only"
  echo "  data_dir: state"
  echo "  heartbeat_interval: 1s"
  echo "  heartbeat_timeout: 60s # 15 agents and their trainers share this machine's cores"
  echo "  run_timeout: 30m"
  echo "boards:"
  for t in 0 1 2; do
    for i in 1 2 3 4 5; do
      echo "  - name: rbench-${short[$t]}-$i"
      echo "    type: sim"
      echo "    simulates: ${types[$t]}"
      echo "    storage:"
      echo "      - {medium: nvme, mount: /, dataset_root: $run/data}"
    done
  done
} > "$run/fleet.yaml"
export JETFLEET_CONFIG=$run/fleet.yaml
"$bin/jetfleet-coordinator" --config "$run/fleet.yaml" --insecure-loopback \
  > "$run/coordinator.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$run/state/endpoint" ] && break; sleep 0.1; done
ep=$(cat "$run/state/endpoint")
for t in 0 1 2; do
  for i in 1 2 3 4 5; do
    n=rbench-${short[$t]}-$i
    "$bin/jetfleet-agent" --coordinator "$ep" --name "$n" --config "$run/fleet.yaml" \
      --platform "sim:${types[$t]}" --sim-speed 20 --sim-scale 0.5 --sim-seed "$i" \
      --state-dir "$run/state-$n" --insecure-loopback --log-level notice \
      > "$run/agent-$n.log" 2>&1 &
    pids+=($!)
  done
done
for _ in $(seq 300); do
  [ "$("$bin/jetfleet" status 2>/dev/null | grep -c '^rbench-.* yes ' || true)" -ge 15 ] && break
  sleep 0.2
done

# The same rounds under both policies. Idle power while waiting at the barrier: the simulator's
# idle rails (agent/share/sim_params.yaml; AGX Xavier: the sum of its rails), a stated model.
rounds_file() {
  cat <<Y
name: rbench-$1
boards: [{type: agx-xavier}, {type: xavier-nx}, {type: nano}]
workload: {model: lenet5, dataset: mnist}
batch_size: 32
workers: 1
storage: nvme
rounds: $rounds
local: {minibatches: $minibatches}
policy: $1
$([ "$1" = equal-finish ] && echo "spread: 10%")
timeout: 30m
straggler: wait
idle_power:
  - {type: agx-xavier, watts: 5.258}
  - {type: xavier-nx, watts: 2.763}
  - {type: nano, watts: 0.933}
seed: 1
Y
}
rounds_file maxn > "$run/maxn.yaml"
rounds_file equal-finish > "$run/equal-finish.yaml"

t0=$(date +%s)
"$bin/jetfleet" rounds plan "$run/equal-finish.yaml" > "$run/plan.log"
t1=$(date +%s)
"$bin/jetfleet" rounds run "$run/maxn.yaml" > "$run/maxn.log"
t2=$(date +%s)
"$bin/jetfleet" rounds run "$run/equal-finish.yaml" > "$run/equal-finish.log"
t3=$(date +%s)

# Per rounds run (ids 1 and 2): the mean spread over its rounds and its total energy.
db=$run/state/jetfleet.db
figures() {
  sqlite3 "$db" "SELECT printf('%.2f %.3f %d %d', avg(spread_pct), sum(energy_j), sum(boards_in),
                 sum(boards)) FROM fl_round WHERE rounds = $1"
}
read -r ms me min mall <<< "$(figures 1)"
read -r es ee ein eall <<< "$(figures 2)"
echo "boards=15 rounds=$rounds local_minibatches=$minibatches simulated=1"
echo "maxn_spread_pct=$ms"
echo "maxn_energy_j=$me"
echo "equal_finish_spread_pct=$es"
echo "equal_finish_energy_j=$ee"
echo "maxn_boards_in=$min/$mall equal_finish_boards_in=$ein/$eall"
# Per round: round 1 is planned from the models alone, later rounds after the closed-loop
# correction (docs/rounds.md "Closed-loop correction").
echo "equal_finish_spread_pct_by_round=$(sqlite3 "$db" "SELECT group_concat(printf('%.2f', spread_pct), ',') FROM (SELECT spread_pct FROM fl_round WHERE rounds = 2 ORDER BY round)")"
echo "maxn_loss_last=$(sqlite3 "$db" "SELECT printf('%.4f', loss) FROM fl_round WHERE rounds = 1 ORDER BY round DESC LIMIT 1")"
echo "equal_finish_loss_last=$(sqlite3 "$db" "SELECT printf('%.4f', loss) FROM fl_round WHERE rounds = 2 ORDER BY round DESC LIMIT 1")"
echo "profile_s=$((t1 - t0)) maxn_wall_s=$((t2 - t1)) equal_finish_wall_s=$((t3 - t2))"
