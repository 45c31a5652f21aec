#!/bin/sh
# The simulated AGX Orin against a real one's 4,368 power modes (docs/simulator.md, "AGX Orin
# against real power modes"): prints orin_time_ratio_mape_pct and orin_power_mape_pct as
# name=value lines. Needs the build tree (scripts/build.sh build) and the CSV, which is outside
# the repository: ../shared/reference/orin-agx-powermodes/resnet-training.csv, or give its path.
#   [JFB_KEEP=DIR] bench/sim-orin-modes.sh [CSV] [SIM_PARAMS.yaml]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
csv=${1:-$root/../shared/reference/orin-agx-powermodes/resnet-training.csv}
params=${2:-$root/agent/share/sim_params.yaml}
build=${JF_BUILD_DIR:-$root/build}
[ -r "$csv" ] || { echo "sim-orin-modes: cannot read '$csv'" >&2; exit 2; }
for lib in agent/sim/libjf_sim.a common/libjf_common.a; do
    [ -r "$build/$lib" ] || { echo "sim-orin-modes: no $build/$lib; build first" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$root/bench/orin_modes_table.py" "$csv" > "$tmp/modes.inc"
cc -std=c11 -O2 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wformat=2 -Wvla -Werror -DJFB_MODES_TABLE="\"$tmp/modes.inc\"" \
    -I"$root/agent/sim" -I"$root/common" -I"$root/tests/support" \
    -o "$tmp/sim-orin-modes" "$root/bench/sim_orin_modes.c" "$root/tests/support/jft_sim_modes.c" \
    "$build/agent/sim/libjf_sim.a" "$build/common/libjf_common.a" -lyaml -ljansson -lm
# JFB_KEEP=DIR keeps the program there, for bench/sim-orin-fit.py.
if [ -n "${JFB_KEEP:-}" ]; then
    cp "$tmp/sim-orin-modes" "$JFB_KEEP/"
fi
"$tmp/sim-orin-modes" "$params"
