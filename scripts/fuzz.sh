#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/, clang, ASan + UBSan) into ./build-fuzz and runs
# each for SECONDS (default 60), seeded from the test fixtures. Prints one line per target:
#   fuzz_msg: seconds=60 execs=123456 crashes=0
# and exits 1 if any target found a crash, leak, timeout or out-of-memory input (kept under
# build-fuzz/artifacts/<target>/ to reproduce with: build-fuzz/bin/<target> <file>).
#   scripts/fuzz.sh [SECONDS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
"$top/scripts/deps.sh" --fuzz
build=${JF_FUZZ_BUILD_DIR:-$top/build-fuzz}
cmake -S "$top" -B "$build" -DJF_FUZZ=ON -DJF_WERROR=ON -DJF_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 >/dev/null
cmake --build "$build" -j "${JF_JOBS:-$(nproc)}" --target fuzz_msg fuzz_fleet fuzz_sweep >/dev/null

fx=$top/tests/fixtures
declare -A seeds=(
  [fuzz_msg]="$fx/messages/good $fx/messages/bad"
  [fuzz_fleet]="$fx/yaml/good $fx/yaml/bad"
  [fuzz_sweep]="$fx/yaml/good $fx/yaml/bad $top/sweeps"
)
# One target is one process on one core: they run side by side, at most one per core, each for
# its full SECONDS (three targets on two cores: two minutes, not three).
fuzz_one() { # fuzz_one TARGET: runs it; its log is $build/TARGET.log
  local target=$1 corpus=$build/corpus/$1 artifacts=$build/artifacts/$1
  rm -rf "$artifacts"
  mkdir -p "$corpus" "$artifacts"
  # The first corpus folder is ours to write; the fixtures are read-only seeds.
  # shellcheck disable=SC2086
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/bin/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/" "$corpus" ${seeds[$target]} >"$build/$target.log" 2>&1 || true
}
targets=(fuzz_msg fuzz_fleet fuzz_sweep)
slots=${JF_JOBS:-$(nproc)}
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$slots" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait || true

failed=0
for target in "${targets[@]}"; do
  log=$build/$target.log
  execs=$(grep -oE 'Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' | tail -n 1 || true)
  crashes=$(find "$build/artifacts/$target" -type f | wc -l)
  echo "$target: seconds=$seconds execs=${execs:-0} crashes=$crashes"
  if [ "$crashes" -ne 0 ] || [ -z "$execs" ]; then
    failed=1
    tail -n 40 "$log"
  fi
done
exit "$failed"
