#!/usr/bin/env bash
# Set-up plus the main job: installs the Debian packages, builds, generates small datasets in
# their real formats (MNIST idx, CIFAR-10 binary, GLD-23k JPEG + CSV), starts a coordinator
# (embedded SQLite store) and three local agents on 127.0.0.1, runs the demo sweep
# (sweeps/demo.yaml: LeNet-5, ResNet-18 and MobileNetV3 trained for real with libtorch on this
# machine's CPU, 0 and 1 loader workers) and prints the results table. Everything it makes stays
# in ./demo-run; the processes are stopped when it ends, whatever happens.
#   ./scripts/demo.sh              JF_DEMO_AGENTS=N (default 3)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
agents=${JF_DEMO_AGENTS:-3}
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

echo "== datasets: synthetic, in the real on-disk formats ($run/data)"
"$bin/jetfleet-datagen" --kind mnist --scale 0.05 --seed 1 --out "$run/data/mnist"
"$bin/jetfleet-datagen" --kind cifar10 --scale 0.004 --seed 1 --out "$run/data/cifar10"
"$bin/jetfleet-datagen" --kind gld23k --scale 0.002 --seed 1 --out "$run/data/gld23k"

{
  echo "# Demo fleet written by scripts/demo.sh: $agents plain Linux hosts on this machine."
  echo "coordinator:"
  echo "  agent_endpoint: tcp://127.0.0.1:*"
  echo "  data_dir: state"
  echo "  heartbeat_interval: 1s"
  echo "  heartbeat_timeout: 5s"
  echo "boards:"
  for i in $(seq "$agents"); do
    echo "  - name: host-$i"
    echo "    type: host"
    echo "    storage:"
    echo "      - medium: local"
    echo "        mount: /"
    echo "        dataset_root: $run/data"
  done
} > "$run/fleet.yaml"
export JETFLEET_CONFIG=$run/fleet.yaml

echo "== coordinator"
"$bin/jetfleet-coordinator" --config "$run/fleet.yaml" > "$run/coordinator.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$run/state/endpoint" ] && break; sleep 0.1; done
if [ ! -s "$run/state/endpoint" ]; then
  echo "demo: the coordinator did not start; see $run/coordinator.log" >&2
  cat "$run/coordinator.log" >&2
  exit 1
fi
endpoint=$(cat "$run/state/endpoint")
echo "   listening for agents on $endpoint"

echo "== $agents agents"
for i in $(seq "$agents"); do
  "$bin/jetfleet-agent" --coordinator "$endpoint" --name "host-$i" --config "$run/fleet.yaml" \
    > "$run/agent-host-$i.log" 2>&1 &
  pids+=($!)
done
online=0
for _ in $(seq 100); do
  online=$("$bin/jetfleet" status 2>/dev/null | grep -c ' online' || true)
  [ "$online" -ge "$agents" ] && break
  sleep 0.2
done
"$bin/jetfleet" status

echo "== sweep plan"
"$bin/jetfleet" sweep plan "$top/sweeps/demo.yaml"
echo "== sweep submit --wait"
"$bin/jetfleet" sweep submit "$top/sweeps/demo.yaml" --wait
echo "== results (mean of the epochs after the warm-up, per run; measured on this machine)"
"$bin/jetfleet" results --sweep demo
echo
echo "Store: $run/state/jetfleet.db   Export: $bin/jetfleet export --sweep demo --what epochs"
