#!/bin/sh
# kill -9 chaos at full size (issue #11): 20 simulated agents, a 200-run sweep, the coordinator
# SIGKILLed 10 times and agents SIGKILLed mid-run (trainers alive and dead), by running the
# suite's chaos_kill_itest with its JF_CHAOS_* parameters. Prints its name=value figures.
# Usage: bench/chaos-kill.sh [build-dir]   (default: build; build it first)
set -eu
build=${1:-build}
export JF_BIN_DIR="$PWD/$build/bin" JF_FIXTURES="$PWD/tests/fixtures"
export JF_CHAOS_AGENTS=${JF_CHAOS_AGENTS:-20}
export JF_CHAOS_REPEATS=${JF_CHAOS_REPEATS:-5} # 20 boards x 2 batch sizes x 5 = 200 runs
export JF_CHAOS_COORD_KILLS=${JF_CHAOS_COORD_KILLS:-10}
export JF_CHAOS_AGENT_KILLS=${JF_CHAOS_AGENT_KILLS:-4}
export JF_CHAOS_SEED=${JF_CHAOS_SEED:-11}
export JF_CHAOS_BOUND_S=${JF_CHAOS_BOUND_S:-600}
exec "$build/bin/chaos_kill_itest"
