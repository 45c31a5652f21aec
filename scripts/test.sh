#!/usr/bin/env bash
# Set-up plus every test: installs the Debian packages, builds with warnings as errors and runs
# the whole ctest suite (unit and integration). Run from anywhere, as root or with sudo.
#   ./scripts/test.sh                 all tests
#   ./scripts/test.sh -L unit         extra arguments go to ctest
# Environment: JF_BUILD_DIR (default ./build), JF_SANITIZE=1 builds with ASan+UBSan into
# ./build-sanitize instead, JF_TEST_TIMEOUT_SCALE multiplies every test time limit, JF_TEST_JOBS
# sets how many tests run at once (default: one more than the cores; with JF_SANITIZE=1, the
# cores).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/deps.sh"

extra=()
build=${JF_BUILD_DIR:-$top/build}
# Most integration tests wait (for daemons, timeouts, partitions): at one test per core the whole
# suite kept 2 cores 41 % busy (2026-12-02, 683 s); one more test at a time took 549 s, all
# passing. The tests that bound timing run alone (RUN_SERIAL) whatever this is.
jobs=${JF_TEST_JOBS:-$(($(nproc) + 1))}
if [ "${JF_SANITIZE:-0}" = 1 ]; then
  build=${JF_BUILD_DIR:-$top/build-sanitize}
  extra+=(-DJF_SANITIZE=ON)
  # Instrumented code runs slower: stretch every test's time limit (read at configure time).
  export JF_TEST_TIMEOUT_SCALE=${JF_TEST_TIMEOUT_SCALE:-3}
  # Instrumented tests use their core: one per core.
  jobs=${JF_TEST_JOBS:-$(nproc)}
  # A leak or UB report fails the test (STYLE.md §9).
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
echo "== build ($build)"
"$top/scripts/build.sh" "$build" "${extra[@]}"
echo "== tests"
cd "$build"
ctest --output-on-failure --timeout 300 -j "$jobs" "$@"
