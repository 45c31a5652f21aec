# Sourced by bench/fleet-scale.sh and bench/fleet-soak.sh: the fleet and the sweep that jf-loadgen's
# sessions register and run in. write_loadgen_fleet WORK SESSIONS HZ NAME writes WORK/fleet.yaml
# (SESSIONS simulated AGX Xavier boards lg-0001..., telemetry at HZ, store in WORK/state) and
# WORK/sweep.yaml (sweep NAME: one run per board that outlasts the benchmark). Optional REPEATS
# (runs per board, default 1: for jf-loadgen --run-seconds), RETENTION (a duration: finished
# runs' telemetry is dropped that long after they end; default none) and PROBES (more boards,
# probe-0001..., for a second jf-loadgen; default 0). The boards are labelled `loadgen` and
# `probe`, so that a sweep can target either.
write_loadgen_fleet() {
  local work=$1 sessions=$2 hz=$3 name=$4 repeats=${5:-1} retention=${6:-} probes=${7:-0}
  {
    echo "coordinator:"
    echo "  agent_endpoint: tcp://127.0.0.1:*"
    echo "  data_dir: $work/state"
    echo "  telemetry_hz: $hz"
    echo "  run_timeout: 168h"
    if [ -n "$retention" ]; then
      echo "  retention: {telemetry_raw: $retention, telemetry_after: drop}"
    fi
    echo "boards:"
    for i in $(seq -f '%04g' 1 "$sessions"); do
      echo "  - {name: lg-$i, type: sim, simulates: agx-xavier, labels: [loadgen],"
      echo "     storage: [{medium: local, mount: /, dataset_root: /nonexistent}]}"
    done
    for i in $(seq -f '%04g' 1 "$probes"); do
      echo "  - {name: probe-$i, type: sim, simulates: agx-xavier, labels: [probe],"
      echo "     storage: [{medium: local, mount: /, dataset_root: /nonexistent}]}"
    done
  } > "$work/fleet.yaml"
  cat > "$work/sweep.yaml" <<YAML
name: $name
description: "runs per board for jf-loadgen, each ended by it or outlasting the benchmark"
target: {device_types: [agx-xavier]}
workloads: [{model: lenet5, dataset: mnist, epochs: 1}]
power_modes: [MAXN]
storage: [local]
workers: [0]
batch_sizes: [16]
repeats: $repeats
YAML
}
