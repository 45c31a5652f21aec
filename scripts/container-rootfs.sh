#!/bin/bash
# Makes the root filesystem skeleton for jetfleet-agent --container with podman's --rootfs
# (docs/containers.md), offline: empty mount points and the merged-/usr symlinks of the host,
# so that the host's own /usr and /etc, bind-mounted read-only, are the image (no registry, no
# network). Prints the --container command for this host. Usage: scripts/container-rootfs.sh DIR
# [ENGINE] (ENGINE: podman's path, default /usr/bin/podman).
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 DIR [ENGINE]" >&2
    exit 2
fi
dir=$1
engine=${2:-/usr/bin/podman}
mkdir -p "$dir"/{usr,etc,proc,sys,dev,tmp,run,var/tmp}
chmod 1777 "$dir/tmp" "$dir/var/tmp"
# Merged /usr (Debian 12): /bin, /lib, /lib64, /sbin are symlinks into /usr on the host too.
for l in bin lib lib64 sbin; do
    if [ -L "/$l" ] && [ ! -e "$dir/$l" ]; then
        ln -s "$(readlink "/$l")" "$dir/$l"
    elif [ -d "/$l" ] && [ ! -L "/$l" ]; then
        mkdir -p "$dir/$l"
    fi
done
# crun cannot run under a hybrid cgroup hierarchy (cgroup v1 with a v2 mount); runc can.
runtime=""
if [ -x /usr/sbin/runc ] && [ ! -f /sys/fs/cgroup/cgroup.controllers ]; then
    runtime="--runtime /usr/sbin/runc"
fi
vols="-v /usr:/usr:ro -v /etc:/etc:ro"
for l in bin lib lib64 sbin; do
    if [ -d "/$l" ] && [ ! -L "/$l" ]; then
        vols="$vols -v /$l:/$l:ro"
    fi
done
echo "$engine run --rm --network none $runtime --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 $vols --rootfs $dir" | tr -s ' '
