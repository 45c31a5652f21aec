#!/usr/bin/env bash
# Fleet soak: one coordinator (Release build, embedded SQLite) and N protocol sessions from
# jf-loadgen (bench/loadgen.c) streaming telemetry at HZ for SECONDS, each sample a real
# simulated AGX Xavier sample (jetfleet-agent --platform sim:agx-xavier --sample-once). Prints
# name=value figures: the coordinator's resident memory over time and its growth over the last
# half, the stored samples against those the coordinator acknowledged (lost), and the store's
# bytes per stored sample.
#   bench/fleet-soak.sh [--sessions N] [--seconds S] [--hz HZ]   (defaults 1000, 1800, 10)
#   bench/fleet-soak.sh --sessions 200 --seconds 120              (a CI-sized run)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/loadgen-fleet.sh
. "$top/bench/loadgen-fleet.sh"
sessions=1000 seconds=1800 hz=10
while [ $# -gt 0 ]; do
  case "$1" in
    --sessions) sessions=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --hz) hz=$2; shift 2 ;;
    *) echo "usage: $0 [--sessions N] [--seconds S] [--hz HZ]" >&2; exit 2 ;;
  esac
done
build=${JF_BENCH_BUILD_DIR:-$top/build-bench}
"$top/scripts/deps.sh" >/dev/null
JF_BUILD_TYPE=Release "$top/scripts/build.sh" "$build" -DJF_BUILD_BENCH=ON >/dev/null
bin=$build/bin
work=$(mktemp -d /tmp/jf-soak.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

(cd "$work" && "$bin/jetfleet-agent" --platform sim:agx-xavier --sample-once 2>/dev/null) > "$work/sample.json"
write_loadgen_fleet "$work" "$sessions" "$hz" soak
export JETFLEET_CONFIG=$work/fleet.yaml
ulimit -n "$(ulimit -Hn)"
"$bin/jetfleet-coordinator" --config "$work/fleet.yaml" --insecure-loopback > "$work/coordinator.log" 2>&1 &
coord=$!
pids+=("$coord")
for _ in $(seq 100); do [ -s "$work/state/endpoint" ] && break; sleep 0.1; done
"$bin/jetfleet" sweep submit "$work/sweep.yaml" > /dev/null
"$bin/jf-loadgen" --endpoint "$(cat "$work/state/endpoint")" --sessions "$sessions" \
  --sample "$work/sample.json" --prefix lg- --type agx-xavier --hz "$hz" --seconds "$seconds" \
  > "$work/loadgen.out" 2>&1 &
pids+=($!)
rss=() anon=() shm=()
step=$(( seconds / 20 > 1 ? seconds / 20 : 1 ))
for _ in $(seq 1 20); do
  sleep "$step"
  rss+=("$(awk '/^VmRSS/ {print $2}' "/proc/$coord/status")")
  # What the resident size is made of: the heap and other private memory (RssAnon), and the
  # store's mapped files (RssFile, RssShmem: SQLite's WAL index is a shared mapping).
  anon+=("$(awk '/^RssAnon/ {print $2}' "/proc/$coord/status")")
  shm+=("$(awk '/^RssShmem/ {print $2}' "/proc/$coord/status")")
done
wait "${pids[1]}" || true
# jf-loadgen's last status line (its latency summary comes after it).
final=$(grep ' acked_samples=' "$work/loadgen.out" | tail -n 1)
acked=$(sed -n 's/.* acked_samples=\([0-9]*\).*/\1/p' <<< "$final")
rate=$(sed -n 's/.*samples_per_s=\([0-9]*\).*/\1/p' <<< "$final")
if [ -z "$acked" ] || [ -z "$rate" ]; then
  echo "fleet-soak: no status line from jf-loadgen (see $work/loadgen.out)" >&2
  tail -n 5 "$work/loadgen.out" >&2
  exit 1
fi
kill -TERM "$coord"; wait "$coord" || true
db=$(find "$work/state" -name '*.db' | head -n 1)
stored=$(sqlite3 "$db" 'SELECT count(*) FROM telemetry')
# The typed telemetry tables (docs/store.md, "Telemetry storage"): series, layouts, samples.
telemetry_bytes=$(sqlite3 "$db" "SELECT sum(pgsize) FROM dbstat WHERE name IN ('telemetry_series',
  'sqlite_autoindex_telemetry_series_1', 'telemetry_layout', 'telemetry_sample')" 2>/dev/null || echo "")
half=${rss[9]} last=${rss[19]}
echo "sessions=$sessions hz=$hz seconds=$seconds samples_per_s=$rate"
echo "acked_samples=$acked stored_samples=$stored lost=$(( acked > stored ? acked - stored : 0 ))"
echo "rss_mb_series=$(printf '%s,' "${rss[@]}" | awk -F, '{for(i=1;i<NF;i++) printf "%s%.0f", (i>1?",":""), $i/1024}')"
echo "rss_growth_mb_last_half=$(awk -v a="$half" -v b="$last" 'BEGIN {printf "%.1f", (b-a)/1024}')"
echo "rss_anon_mb_series=$(printf '%s,' "${anon[@]}" | awk -F, '{for(i=1;i<NF;i++) printf "%s%.0f", (i>1?",":""), $i/1024}')"
echo "rss_shmem_mb_series=$(printf '%s,' "${shm[@]}" | awk -F, '{for(i=1;i<NF;i++) printf "%s%.0f", (i>1?",":""), $i/1024}')"
if [ -n "$telemetry_bytes" ] && [ "$stored" -gt 0 ]; then
  # The telemetry tables' pages (dbstat), overflow pages included, per stored sample.
  echo "bytes_per_sample=$(( telemetry_bytes / stored )) store_file_mb=$(( $(stat -c %s "$db") / 1048576 ))"
fi
echo "loadgen: $final"
