# Sourced by the benchmarks that run the project's programs. bench_bin_dir DIR prints the
# absolute path of DIR, or, when DIR is empty, of the bin/ of a Release tree with the benchmarks
# that it builds first in $JF_BENCH_BUILD_DIR (default build-bench/ under the checkout, $top).
bench_bin_dir() {
  local bin=$1
  if [ -z "$bin" ]; then
    local build=${JF_BENCH_BUILD_DIR:-$top/build-bench}
    "$top/scripts/deps.sh" >/dev/null
    JF_BUILD_TYPE=Release "$top/scripts/build.sh" "$build" -DJF_BUILD_BENCH=ON >/dev/null
    bin=$build/bin
  fi
  (cd "$bin" && pwd)
}
