#!/usr/bin/env bash
# Converts the real AGX Orin power-mode measurements (../shared/reference/orin-agx-powermodes/,
# measured by the PowerTrain study's lab, not by us) into jetfleet's import format
# (docs/import.md), so `jetfleet import` can load them as a sweep:
#   bench/orin-to-import.sh [-i resnet-training.csv] [-o orin-resnet.csv]
#   jetfleet import --sweep-name orin-real orin-resnet.csv
# One row per power mode: board orin-agx-real, type orin-agx, workload resnet-powertrain, one
# measured epoch (epoch 1: the file has no warm-up), workers and batch size unknown (stored as
# 0 workers and batch 1, placeholders), epoch_time_s = the lab's time value x TIME_SCALE,
# mean_power_w = power_w, energy_j = mean_power_w x epoch_time_s.
set -euo pipefail

# The lab's time is in its own unit (the reference README: use ratios, not seconds). Scaling by
# 1e-4 puts the 4,368 modes between 18 s and 672 s per "epoch", plausible for ResNet training
# on an AGX Orin; every ratio between modes, which is what a model can learn, is unchanged.
TIME_SCALE=0.0001
top="$(cd "$(dirname "$0")/.." && pwd)"
in="$top/../shared/reference/orin-agx-powermodes/resnet-training.csv"
out="orin-resnet.csv"
while getopts "i:o:" opt; do
  case "$opt" in
    i) in="$OPTARG" ;;
    o) out="$OPTARG" ;;
    *) echo "usage: $0 [-i resnet-training.csv] [-o out.csv]" >&2; exit 2 ;;
  esac
done
[ -r "$in" ] || { echo "orin-to-import: cannot read $in" >&2; exit 1; }
expected="cores,cpu_khz,gpu_hz,emc_hz,time,power_w"
header="$(head -n 1 "$in" | tr -d '\r')"
if [ "$header" != "$expected" ]; then
  echo "orin-to-import: $in:1: header '$header', expected '$expected'" >&2
  exit 1
fi

awk -F, -v scale="$TIME_SCALE" -v src="$in" '
  BEGIN {
    OFS = ","
    print "board,board_type,workload,cores,cpu_khz,gpu_freq_hz,emc_freq_hz,workers,batch_size," \
          "epoch,epoch_time_s,mean_power_w,energy_j,source"
  }
  NR == 1 { next }
  NF != 6 { printf "orin-to-import: %s:%d: %d fields, expected 6\n", src, NR, NF > "/dev/stderr"; bad = 1; exit 1 }
  # The integers are copied as text: awk'"'"'s %d stops at 2^31 - 1 in mawk, and an EMC clock of
  # 3199000000 Hz is above it (printed as 2147483647 until this check was added).
  $1 !~ /^[0-9]+$/ || $2 !~ /^[0-9]+$/ || $3 !~ /^[0-9]+$/ || $4 !~ /^[0-9]+$/ {
    printf "orin-to-import: %s:%d: cores and clocks must be whole numbers\n", src, NR > "/dev/stderr"; bad = 1; exit 1 }
  {
    t = $5 * scale
    printf "orin-agx-real,orin-agx,resnet-powertrain,%s,%s,%s,%s,0,1,1,%.6f,%.4f,%.4f,measured-powertrain-lab\n",
           $1, $2, $3, $4, t, $6, $6 * t
    n++
  }
  END { if (!bad) printf "orin-to-import: %d modes from %s -> epoch_time_s = time x %s, energy_j = power_w x epoch_time_s; source=measured-powertrain-lab\n", n, src, scale > "/dev/stderr" }
' "$in" > "$out"
echo "orin-to-import: wrote $out (real data measured by the PowerTrain study's lab; see ../shared/reference/orin-agx-powermodes/README.md)" >&2
