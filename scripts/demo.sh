#!/usr/bin/env bash
# Set-up plus the main job: installs the Debian packages, builds, generates a small MNIST
# dataset in its real format (idx) for the real host, starts a coordinator
# (embedded SQLite store), 15 simulated boards as in the study (5 AGX Xavier, 5 Xavier NX,
# 5 Nano: agents with --platform sim:<type>, whose runs are jetfleet-train-sim on the
# performance model of docs/simulator.md) and one real host agent on 127.0.0.1, runs the demo
# sweep (sweeps/demo.yaml: LeNet-5, ResNet-18 and MobileNetV3, 0 and 1 loader workers; the host
# trains LeNet-5 for real with libtorch on this machine's CPU), prints the results table, the
# runs' validity summary and the board-to-board epoch-time variability (docs/analysis.md), runs a
# second sweep at 54 custom power points of one simulated AGX Xavier (sweeps/demo-modes.yaml) and
# fits time and power models on it, with their errors, its Pareto front and a recommended mode
# under a power budget, profiles 12 of those points adaptively (sweep submit --adaptive) and checks
# that model against all 54, measures rooflines on the host's CPU and one simulated AGX Xavier
# (sweeps/demo-roofline.yaml, jetfleet roofline), trains beside inference on both
# (sweeps/demo-concurrent.yaml: real on the host) and the idle baseline of one simulated Xavier NX
# (jetfleet baseline), writes an HTML report per sweep (jetfleet report), checks the store
# and takes an online backup of it (jetfleet store check, jetfleet store backup) and prints the
# wall time. Everything it makes stays in ./demo-run; the processes are stopped when
# it ends, whatever happens.
#   ./scripts/demo.sh    JF_DEMO_SIM_SPEED=X (default 2000: modelled seconds per wall second)
set -euo pipefail
SECONDS=0
top=$(cd "$(dirname "$0")/.." && pwd)
sim_types=(agx-xavier xavier-nx nano)
sim_short=(agx nx nano)
sim_per_type=5
sim_speed=${JF_DEMO_SIM_SPEED:-2000}
sims=$((${#sim_types[@]} * sim_per_type))
agents=$((1 + sims))
run=$top/demo-run
build=${JF_BUILD_DIR:-$top/build}
bin=$build/bin

"$top/scripts/deps.sh"
echo "== build ($build)"
buildlog=$(mktemp)
if ! "$top/scripts/build.sh" "$build" > "$buildlog" 2>&1; then
  cat "$buildlog" >&2
  rm -f "$buildlog"
  echo "demo: the build failed (output above)" >&2
  exit 1
fi
rm -f "$buildlog"

rm -rf "$run"
mkdir -p "$run"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
  done
}
trap cleanup EXIT INT TERM

echo "== dataset for the real host: synthetic MNIST in its real on-disk format ($run/data)"
"$bin/jetfleet-datagen" --kind mnist --scale 0.05 --seed 1 --out "$run/data/mnist"

{
  echo "# Demo fleet written by scripts/demo.sh: one plain Linux host on this machine and"
  echo "# $sims simulated Jetsons (type sim; their agents run --platform sim:<type>)."
  echo "coordinator:"
  echo "  agent_endpoint: tcp://127.0.0.1:*"
  echo "  data_dir: state"
  echo "  heartbeat_interval: 1s"
  echo "  heartbeat_timeout: 20s  # $agents agents and their trainers share this machine's cores"
  echo "  telemetry_hz: 5"
  echo "boards:"
  echo "  - name: host-1"
  echo "    type: host"
  echo "    storage:"
  echo "      - {medium: local, mount: /, dataset_root: $run/data}"
  for t in "${!sim_types[@]}"; do
    for i in $(seq -w 1 "$sim_per_type"); do
      echo "  - name: sim-${sim_short[$t]}-0$i"
      echo "    type: sim"
      echo "    simulates: ${sim_types[$t]}"
      echo "    storage:"
      echo "      - {medium: nvme, mount: /, dataset_root: $run/data}"
    done
  done
} > "$run/fleet.yaml"
export JETFLEET_CONFIG=$run/fleet.yaml

echo "== coordinator"
"$bin/jetfleet-coordinator" --config "$run/fleet.yaml" --insecure-loopback > "$run/coordinator.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$run/state/endpoint" ] && break; sleep 0.1; done
if [ ! -s "$run/state/endpoint" ]; then
  echo "demo: the coordinator did not start; see $run/coordinator.log" >&2
  cat "$run/coordinator.log" >&2
  exit 1
fi
endpoint=$(cat "$run/state/endpoint")
echo "   listening for agents on $endpoint"

echo "== $agents agents: host-1 (real) and $sims simulated boards (sim speed $sim_speed)"
# Each agent keeps its spool in its own state directory (one agent per --state-dir).
"$bin/jetfleet-agent" --coordinator "$endpoint" --name host-1 --config "$run/fleet.yaml" \
  --state-dir "$run/agent-state-host-1" --insecure-loopback > "$run/agent-host-1.log" 2>&1 &
pids+=($!)
for t in "${!sim_types[@]}"; do
  for i in $(seq -w 1 "$sim_per_type"); do
    name=sim-${sim_short[$t]}-0$i
    "$bin/jetfleet-agent" --coordinator "$endpoint" --name "$name" --config "$run/fleet.yaml" \
      --platform "sim:${sim_types[$t]}" --sim-speed "$sim_speed" --sim-seed 1 \
      --state-dir "$run/agent-state-$name" --insecure-loopback > "$run/agent-$name.log" 2>&1 &
    pids+=($!)
  done
done
online=0
for _ in $(seq 100); do
  # jetfleet status: one line per board, its third column "yes" while the board is online.
  online=$("$bin/jetfleet" status 2>/dev/null | awk '$3 == "yes"' | wc -l)
  [ "$online" -ge "$agents" ] && break
  sleep 0.2
done
"$bin/jetfleet" status

echo "== sweep plan"
"$bin/jetfleet" sweep plan "$top/sweeps/demo.yaml"
echo "== sweep submit --wait"
# Exit 1 when runs failed: the simulated Nanos run out of memory for ResNet-18 and MobileNetV3
# at batch 16, as the model says (docs/simulator.md); the results below show the rest.
if ! "$bin/jetfleet" sweep submit "$top/sweeps/demo.yaml" --wait; then
  echo "demo: some runs failed (see 'jetfleet runs --sweep demo --state failed')"
fi
echo "== results (mean of the epochs after the warm-up, per run; host-1 measured on this"
echo "   machine, the sim-* boards simulated)"
"$bin/jetfleet" results --sweep demo
echo
echo "== measurement validity and board-to-board epoch-time variability (docs/analysis.md)"
if ! "$bin/jetfleet" check --sweep demo | tail -n 1 ||
   ! "$bin/jetfleet" variability --sweep demo --metric e2e; then
  echo "demo: the analysis failed (message above)"
fi
echo
echo "== models over the power-mode space (docs/analysis.md): sim-agx-01 at 54 custom points"
# value KEY TEXT: the number after KEY= in TEXT.
value() { sed -n "s/.*\\b$1=\\([-0-9.]*\\).*/\\1/p" <<< "$2" | head -n 1; }
fit() {
  "$bin/jetfleet" model fit --sweep demo-modes --workload resnet18-cifar10 --board sim-agx-01 \
    --target "$1" --kind linear
}
if "$bin/jetfleet" sweep submit "$top/sweeps/demo-modes.yaml" --wait > "$run/demo-modes.log" &&
   "$bin/jetfleet" check --sweep demo-modes | tail -n 1 &&
   time_fit=$(fit time) && power_fit=$(fit power); then
  echo "time model:  $time_fit   (cv_mape_pct: 5-fold cross-validated error, percent;"
  echo "   a simulated run's noise is seeded by its training seed, board and operating point)"
  echo "power model: $power_fit"
  if phys_fit=$("$bin/jetfleet" model fit --sweep demo-modes --workload resnet18-cifar10 \
    --board sim-agx-01 --target time --kind phys); then
    echo "time model, phys form (7 parameters from how the boards work): $phys_fit"
  fi
  tid=$(value model "$time_fit")
  pid=$(value model "$power_fit")
  echo "-- the measured time-energy Pareto front of sim-agx-01 (simulated):"
  "$bin/jetfleet" pareto --sweep demo-modes --workload resnet18-cifar10 --board sim-agx-01
  # A budget halfway between the lowest and highest mean power measured in the sweep.
  budget=$("$bin/jetfleet" pareto --sweep demo-modes --workload resnet18-cifar10 \
    --board sim-agx-01 --predicted "$tid,$pid" --format csv 2> /dev/null |
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "power_w") c = i; next }
      { if (lo == "" || $c < lo) lo = $c; if ($c > hi) hi = $c }
      END { printf "%.1f", (lo + hi) / 2 }')
  echo "-- the fastest mode under a ${budget} W power budget, as the two models predict it:"
  "$bin/jetfleet" recommend --sweep demo-modes --workload resnet18-cifar10 --board sim-agx-01 \
    --power-budget "$budget" --time-model "$tid" --power-model "$pid" ||
    echo "demo: recommend found no mode (message above)"
else
  echo "demo: the models part failed (see $run/demo-modes.log and the message above)"
fi
echo
echo "== adaptive profiling (docs/analysis.md, \"Active profiling\"): 12 of the 54 points chosen in"
echo "   rounds, models fitted on them, then checked against all 54 measured above"
sed 's/^name: demo-modes$/name: demo-adaptive/' "$top/sweeps/demo-modes.yaml" > "$run/demo-adaptive.yaml"
if "$bin/jetfleet" sweep submit --adaptive 12 --wait "$run/demo-adaptive.yaml" \
     > "$run/demo-adaptive.log"; then
  grep -E '^round|^profiled' "$run/demo-adaptive.log"
  atid=$(grep -m 1 'target=time' "$run/demo-adaptive.log" | sed -n 's/.*\bmodel=\([0-9]*\).*/\1/p')
  if [ -n "$atid" ]; then
    echo "-- its time model (model $atid) against the 54 measured points of demo-modes:"
    "$bin/jetfleet" model eval --model "$atid" --sweep demo-modes --board sim-agx-01 | tail -n 2
  fi
else
  echo "demo: adaptive profiling failed (see $run/demo-adaptive.log and the message above)"
fi
echo
echo "== rooflines (docs/roofline.md): peak compute and bandwidth, measured on host-1's CPU and"
echo "   modelled for sim-agx-01 at MAXN, with each workload's place on them"
if "$bin/jetfleet" sweep submit "$top/sweeps/demo-roofline.yaml" --wait > "$run/demo-roofline.log"; then
  for b in host-1 sim-agx-01; do
    "$bin/jetfleet" roofline --board "$b" || echo "demo: the roofline of $b failed (message above)"
  done
else
  echo "demo: the roofline sweep failed (see $run/demo-roofline.log)"
fi
echo
echo "== concurrent training and inference (docs/concurrent.md): LeNet-5 trains while a second"
echo "   LeNet-5 serves 100 requests/s, 4 per minibatch, 50 ms budget; for real on host-1's CPU"
echo "   (measured), modelled on sim-agx-01 (simulated)"
if "$bin/jetfleet" sweep submit "$top/sweeps/demo-concurrent.yaml" --wait \
  > "$run/demo-concurrent.log" &&
  "$bin/jetfleet" export --sweep demo-concurrent --what epochs --format csv \
    > "$run/demo-concurrent.csv"; then
  # One line per epoch from the export's columns, by name.
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { printf "   %-11s epoch %s: %5.0f ms, %4d requests in %3d minibatches, latency p50 %5.1f ms p99 %5.1f ms, %5.1f %% within budget\n",
        $c["board"], $c["epoch"], $c["e2e_s"] * 1000, $c["infer_requests"],
        $c["infer_batches"], $c["latency_p50_s"] * 1000, $c["latency_p99_s"] * 1000,
        $c["within_budget"] * 100 }' \
    "$run/demo-concurrent.csv"
else
  echo "demo: the concurrent sweep failed (see $run/demo-concurrent.log and the message above)"
fi
echo
echo "== idle baseline (docs/baseline.md): sim-nx-01's idle power with DVFS on and off, telemetry on"
echo "   and off, and in its lowest-power mode (simulated)"
if "$bin/jetfleet" baseline --board sim-nx-01 --seconds 30 > "$run/demo-baseline.log"; then
  "$bin/jetfleet" baseline show --board sim-nx-01
else
  echo "demo: the idle baseline failed (see $run/demo-baseline.log)"
fi
echo
echo "== federated rounds (docs/rounds.md): LeNet-5 on MNIST over a simulated AGX Xavier, Xavier"
echo "   NX and Nano, each on its own third of the data; 2 rounds in their fastest modes (maxn),"
echo "   the weights averaged (FedAvg) after each; times and energy are the simulator's model"
cat > "$run/demo-rounds.yaml" <<Y
name: demo-rounds
boards: [{name: sim-agx-01}, {name: sim-nx-01}, {name: sim-nano-01}]
workload: {model: lenet5, dataset: mnist}
batch_size: 32
rounds: 2
local: {minibatches: 20}
policy: maxn
timeout: 5m
seed: 1
Y
if "$bin/jetfleet" rounds run "$run/demo-rounds.yaml" > "$run/demo-rounds.log"; then
  grep -E '^round=' "$run/demo-rounds.log"
  rid=$(sed -n 's/^rounds_id=\([0-9]*\) name=.*/\1/p' "$run/demo-rounds.log")
  "$bin/jetfleet" rounds show "$rid"
else
  echo "demo: the rounds failed (see $run/demo-rounds.log and the message above)"
fi
echo
echo "== reports (docs/report.md): one self-contained HTML page per sweep"
for s in demo demo-modes; do
  if "$bin/jetfleet" report --sweep "$s" -o "$run/report-$s.html"; then
    echo "   $run/report-$s.html"
  else
    echo "demo: the report of $s failed (message above)"
  fi
done
echo
echo "== the store: integrity check and an online backup (docs/store.md)"
"$bin/jetfleet" store check
"$bin/jetfleet" store backup -o "$run/backup.db"
echo
echo "Store: $run/state/jetfleet.db   Backup: $run/backup.db"
echo "Export: $bin/jetfleet export --sweep demo --what epochs"
echo "demo: finished in ${SECONDS} s (wall time, build and datasets included)"
