#!/bin/sh
# The concurrent training and inference searches against exhaustive search on simulated boards
# (docs/concurrent.md, "Benchmark"): every point of each board's space (cores x CPU x GPU x EMC
# clock steps x inference batch sizes) profiled on the simulator, then 10 x 10 latency and power
# budget pairs per board; prints, per board and over all, for the gradient descent (gd) and the
# active-learning search (al): within_budget_pct, gap_to_optimal_pct, modes_profiled (and the
# share of answers within 7 % of the optimum, why each case missed, the re-run noise, and
# reference searches) as name=value lines. Simulated data. JF_CSEARCH_SEED: the seed (default 1);
# JF_JOBS: processes for the exhaustive pass (default: the cores). About 11 min on 2 cores.
# Needs the build tree (scripts/build.sh build).
#   bench/concurrent-search.sh [BOARD_TYPE...]   (default: orin-agx xavier-nx)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${JF_BUILD_DIR:-$root/build}
params=${JF_SIM_PARAMS:-$root/agent/share/sim_params.yaml}
for lib in agent/sim/libjf_sim.a coordinator/fit/libjf_csearch.a common/libjf_common.a; do
    [ -r "$build/$lib" ] || { echo "concurrent-search: no $build/$lib; build first" >&2; exit 2; }
done
[ $# -gt 0 ] || set -- orin-agx xavier-nx
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=c11 -O2 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wformat=2 -Wvla -Werror \
    -I"$root/agent/sim" -I"$root/common" -I"$root/coordinator/fit" \
    -o "$tmp/concurrent-search" "$root/bench/concurrent_search.c" \
    "$build/coordinator/fit/libjf_csearch.a" "$build/agent/sim/libjf_sim.a" \
    "$build/common/libjf_common.a" -lyaml -ljansson -lsodium -lm
start=$(date +%s)
"$tmp/concurrent-search" "$params" "$@"
echo "wall_s=$(( $(date +%s) - start ))"
