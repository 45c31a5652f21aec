#!/bin/sh
# Container overhead on this machine (issue #15, docs/containers.md): the suite's
# containers_itest with JF_CONTAINER_REPEATS pairs of LeNet-5 runs (2 epochs, batch 64, 0
# workers) on one host board, bare and in podman (--rootfs over the host's /usr and /etc, see
# scripts/container-rootfs.sh); prints jetfleet containers' table and its name=value means.
# Exits 77 with the reason where no container engine works.
# Usage: bench/container-overhead.sh [build-dir]   (default: build; build it first)
set -eu
build=${1:-build}
export JF_BIN_DIR="$PWD/$build/bin" JF_FIXTURES="$PWD/tests/fixtures"
export JF_CONTAINER_REPEATS=${JF_CONTAINER_REPEATS:-5}
exec "$build/bin/containers_itest"
