#!/bin/sh
# A partition at full size (issue #11): the suite's partition_itest with a 60 s cut (ctest runs
# 15 s to stay within its time limit). Prints its name=value figures for both cases: with
# acknowledgements (nothing lost) and the control without them (samples lost).
# Usage: bench/partition.sh [build-dir]   (default: build; build it first)
set -eu
build=${1:-build}
export JF_BIN_DIR="$PWD/$build/bin" JF_FIXTURES="$PWD/tests/fixtures"
export JF_PARTITION_CUT_S=${JF_PARTITION_CUT_S:-60}
exec "$build/bin/partition_itest"
