#!/usr/bin/env bash
# jetfleet-train against Python PyTorch + torch.utils.data.DataLoader on the same files.
# Installs the baseline (Debian's python3-torch and python3-torchvision), builds a Release tree
# in ./build-bench, generates the datasets in their real formats under ./bench-data, then runs
# bench/compare.py: for each workload and workers 0/1/2, the two sides alternately (A B A B ...),
# with the same threads, batch and minibatch count, printing medians and per-pair ratios of
# samples/s, total fetch stall and peak RSS; then the loader alone on the JPEG workload.
#   bench/train-vs-pytorch.sh [--pairs N] [--threads N] [--only WORKLOAD] ...  (compare.py args)
# Takes about 20-30 minutes on a 2-core machine with the defaults. Not part of the test suite.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh" --bench
cmake -S "$top" -B "$top/build-bench" -DCMAKE_BUILD_TYPE=Release -DJF_BUILD_TESTS=OFF >/dev/null
cmake --build "$top/build-bench" -j "$(nproc)" --target jetfleet-train jetfleet-datagen >/dev/null
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
gen gld23k 0.05
echo "machine: $(nproc) cores, $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "date: $(date -u +%Y-%m-%d)  torch (Python): $(/usr/bin/python3 -c 'import torch; print(torch.__version__)')"
echo "BLAS: $(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo unknown)"
echo
/usr/bin/python3 "$top/bench/compare.py" --bin "$bin" --data "$data" "$@"
