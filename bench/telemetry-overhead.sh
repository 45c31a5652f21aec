#!/usr/bin/env bash
# Slowdown of training with the agent's telemetry at 10 Hz beside it versus none (issue #4's
# < 1 % target), and the sampler's own CPU share (< 0.5 % of a core). Builds a Release tree with
# the bench programs in ./build-bench, generates MNIST and CIFAR-10 (0.25x) under ./bench-data
# once, then runs bench/telemetry_overhead.py twice: the sampler reading this host, and reading
# the Xavier NX fixture tree (the Jetson reader's file set: rails, GPU, EMC, cpufreq).
#   bench/telemetry-overhead.sh [--pairs N] [--rate HZ] [--threads N] [--only WORKLOAD]
# About 15 minutes on a 2-core machine with the defaults. Not part of the test suite.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cmake -S "$top" -B "$top/build-bench" -DCMAKE_BUILD_TYPE=Release -DJF_BUILD_TESTS=OFF \
  -DJF_BUILD_BENCH=ON >/dev/null
cmake --build "$top/build-bench" -j "$(nproc)" \
  --target jetfleet-train jetfleet-datagen jf-bench-telemetry-load >/dev/null
bin=$top/build-bench/bin
data=${JF_BENCH_DATA:-$top/bench-data}
mkdir -p "$data"
gen() { # kind scale
  [ -e "$data/$1/.complete" ] && return 0
  rm -rf "${data:?}/$1"
  "$bin/jetfleet-datagen" --kind "$1" --scale "$2" --seed 1 --out "$data/$1"
  touch "$data/$1/.complete"
}
gen mnist 0.25
gen cifar10 0.25
echo "machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "date: $(date -u +%Y-%m-%d)"
echo
echo "sampler on this host (--platform host):"
python3 "$top/bench/telemetry_overhead.py" --bin "$bin" --data "$data" "$@"
echo
fx=$top/tests/fixtures/sysfs/xavier-nx
echo "sampler on the Xavier NX fixture tree (--platform jetson):"
python3 "$top/bench/telemetry_overhead.py" --bin "$bin" --data "$data" \
  --platform-args "--platform jetson --sysfs-root $fx/sys --proc-root $fx/proc --etc-root $fx/etc" "$@"
