#!/usr/bin/env bash
# Configures and builds jetfleet into a build directory (default: ./build).
#   scripts/build.sh [BUILD_DIR] [extra cmake options...]
# Environment: JF_BUILD_TYPE (Debug|Release, default Debug), JF_JOBS (default: nproc).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
shift || true
jobs=${JF_JOBS:-$(nproc)}
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE="${JF_BUILD_TYPE:-Debug}" -DJF_WERROR=ON "$@" >/dev/null
cmake --build "$build" -j "$jobs"
