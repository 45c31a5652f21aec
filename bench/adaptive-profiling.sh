#!/usr/bin/env bash
# Issue #12's active profiling: how the models' error falls with the number N of profiled power
# modes, for coord_adaptive's choice (a spread, then rounds chosen from what was measured) and for
# a seeded random choice, on two ground truths the choice never reads beyond the modes it picks:
# the simulated AGX Orin's grid modes (bench/simtable.c, one board; simulated data) and the real
# AGX Orin's 4,368 modes (shared/reference/orin-agx-powermodes). Linear time and power models
# (`jetfleet model fit`'s default) are fitted on the N modes; MAPE over every other mode, averaged
# over the seeds (bench/adaptive.c). Self-contained: configures and builds BUILD_DIR, works in a
# temporary directory it removes. Prints name=value lines (and '#' lines saying what each is).
#
#   bench/adaptive-profiling.sh [BUILD_DIR]        default: build-bench
#
# Environment: JF_JOBS (build jobs, 2), JF_BUILD_TYPE (Release), JF_AP_SEED (the simulated
# board's seed, 7), JF_AP_NS (the N, "10,20,30,50,100"), JF_AP_SEEDS (seeds per N, 5),
# JF_AP_BATCH (modes per adaptive round after the first, 5), JF_AP_KIND (the scored models' kind,
# linear or phys; the modes are chosen the same way), JF_AP_ORIN_CSV (the real Orin file;
# default ../shared/reference/orin-agx-powermodes/resnet-training.csv, skipped when absent).
set -euo pipefail

top="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$top/build-bench}"
seed="${JF_AP_SEED:-7}"
ns="${JF_AP_NS:-10,20,30,50,100}"
seeds="${JF_AP_SEEDS:-5}"
batch="${JF_AP_BATCH:-5}"
orin_csv="${JF_AP_ORIN_CSV:-$top/../shared/reference/orin-agx-powermodes/resnet-training.csv}"

echo "# building $build (benchmarks)" >&2
cmake -S "$top" -B "$build" -DJF_BUILD_BENCH=ON -DCMAKE_BUILD_TYPE="${JF_BUILD_TYPE:-Release}" \
  > /dev/null
cmake --build "$build" -j"${JF_JOBS:-2}" --target jf-simtable jf-adaptive-bench > /dev/null
bin="$build/bin"

work="$(mktemp -d "${TMPDIR:-/tmp}/jf-adaptive-profiling.XXXXXX")"
trap 'rm -rf "$work"' EXIT

bench() { "$bin/jf-adaptive-bench" --table "$1" --prefix "$2" --n "$ns" --seeds "$seeds" \
  --batch "$batch" --kind "${JF_AP_KIND:-linear}"; }

# The simulated Orin: every grid mode of one board, each mode's mean over its epochs 1.. (epoch 0
# is the warm-up), as bench/analysis-quality.sh takes its ground truth.
for w in resnet18-cifar10 mobilenetv3-gld23k; do
  "$bin/jf-simtable" --type orin-agx --workload "$w" --boards 1 --seed "$seed" --modes grid \
    -o "$work/$w.csv" > /dev/null 2>&1
  awk -F, 'NR > 1 && $12 > 0 {
      k = $5 "," $6 "," $7 "," $8 "," $9 "," $10; t[k] += $13; p[k] += $16; n[k]++ }
    END { print "cores,cpu_hz,gpu_hz,emc_hz,workers,batch,time_us,power_mw"
          for (k in n) printf "%s,%.1f,%.3f\n", k, 1e6 * t[k] / n[k], 1e3 * p[k] / n[k] }' \
    "$work/$w.csv" | sort -t, -k1,6n > "$work/$w-modes.csv"
  echo "# simulated orin-agx (seed $seed), $w: simulated data"
  bench "$work/$w-modes.csv" "sim_${w%%-*}"
done

# The real Orin: cores,cpu_khz,gpu_hz,emc_hz,time,power_w; time in the lab's unit (MAPE does not
# depend on it), workers and batch constant.
if [ -r "$orin_csv" ]; then
  # The integers are copied as text (kHz to Hz by appending 000): mawk's %d stops at 2^31 - 1,
  # below the 2201.6 MHz CPU and 3199 MHz EMC clocks (written as 2147.48 MHz until 2026-12-02).
  awk -F, 'NR == 1 { next }
    $1 !~ /^[0-9]+$/ || $2 !~ /^[0-9]+$/ || $3 !~ /^[0-9]+$/ || $4 !~ /^[0-9]+$/ {
      printf "adaptive-profiling: line %d: cores and clocks must be whole numbers\n", NR > "/dev/stderr"
      exit 1 }
    { printf "%s,%s000,%s,%s,0,1,%.3f,%.1f\n", $1, $2, $3, $4, $5 * 1e6, $6 * 1e3 }
    BEGIN { print "cores,cpu_hz,gpu_hz,emc_hz,workers,batch,time_us,power_mw" }' \
    "$orin_csv" | tr -d '\r' > "$work/real-modes.csv"
  echo "# the real AGX Orin, ResNet training (measured, $(($(wc -l < "$work/real-modes.csv") - 1)) modes)"
  bench "$work/real-modes.csv" real
else
  echo "real=skipped (cannot read $orin_csv)"
fi
