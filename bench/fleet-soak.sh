#!/usr/bin/env bash
# Fleet soak: one coordinator (Release build, embedded SQLite) and N protocol sessions from
# jf-loadgen (bench/loadgen.c) streaming telemetry at HZ for SECONDS, each sample a real
# simulated AGX Xavier sample (jetfleet-agent --platform sim:agx-xavier --sample-once). Prints
# name=value figures: the coordinator's resident memory over time and its growth over the last
# half, the stored samples against those the coordinator acknowledged (lost), and the store's
# bytes per stored sample. --run-seconds R makes each session end its run after R s of streaming
# (run.failed) and take the sweep's next one (the time from a run's end to the next run.assign is
# `redispatch`, as jf-loadgen sees it; `coord_redispatch_*` is the coordinator's own part, read to
# sent, from its log); --retention DUR sets fleet.yaml's retention (finished runs' telemetry dropped DUR
# after they end) and prints the telemetry row count at the 20 points: bounded, it levels off.
# Under retention rows are deleted by design, so `lost` is not computed then. --run-spread PCT
# makes each run stream R s plus a seeded uniform draw below PCT % of R, so that runs end apart
# as in a real sweep rather than all in the same tick. --probe-sessions P runs P more sessions in
# a second jf-loadgen, which with so few sessions adds next to nothing of its own to their
# redispatch: `probe_redispatch_*` is the end-to-end figure (a run's end sent to the next
# run.assign received) without the large load generator's own lag. --keep leaves the work
# directory (the coordinator's log, its store) and prints its path.
#   bench/fleet-soak.sh [--sessions N] [--seconds S] [--hz HZ] [--run-seconds R] [--retention D]
#                       [--run-spread PCT] [--probe-sessions P] [--keep]
#                                                         (defaults 1000, 1800, 10, none, none)
#   bench/fleet-soak.sh --sessions 200 --seconds 120 --run-seconds 10 --retention 1m
#                                                         (the CI-sized run of issue #17)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/bench-bin.sh
. "$top/bench/bench-bin.sh"
# shellcheck source=bench/loadgen-fleet.sh
. "$top/bench/loadgen-fleet.sh"
sessions=1000 seconds=1800 hz=10 run_s="" retention="" spread="" keep=0 probes=0
while [ $# -gt 0 ]; do
  case "$1" in
    --sessions) sessions=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --hz) hz=$2; shift 2 ;;
    --run-seconds) run_s=$2; shift 2 ;;
    --retention) retention=$2; shift 2 ;;
    --run-spread) spread=$2; shift 2 ;;
    --probe-sessions) probes=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--sessions N] [--seconds S] [--hz HZ] [--run-seconds R]" \
            "[--retention DURATION] [--run-spread PCT] [--probe-sessions P] [--keep]" >&2
       exit 2 ;;
  esac
done
repeats=1 lgrun=()
if [ -n "$run_s" ]; then
  repeats=$(( seconds / run_s + 2 )) # enough runs per board for the whole soak
  lgrun=(--run-seconds "$run_s")
  [ -z "$spread" ] || lgrun+=(--run-spread "$spread")
fi
bin=$(bench_bin_dir "")
work=$(mktemp -d /tmp/jf-soak.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "$keep" = 1 ]; then echo "kept=$work"; else rm -rf "$work"; fi
}
trap cleanup EXIT INT TERM

(cd "$work" && "$bin/jetfleet-agent" --platform sim:agx-xavier --sample-once 2>/dev/null) > "$work/sample.json"
write_loadgen_fleet "$work" "$sessions" "$hz" soak "$repeats" "$retention" "$probes"
export JETFLEET_CONFIG=$work/fleet.yaml
ulimit -n "$(ulimit -Hn)"
"$bin/jetfleet-coordinator" --config "$work/fleet.yaml" --insecure-loopback > "$work/coordinator.log" 2>&1 &
coord=$!
pids+=("$coord")
for _ in $(seq 100); do [ -s "$work/state/endpoint" ] && break; sleep 0.1; done
"$bin/jetfleet" sweep submit "$work/sweep.yaml" > /dev/null
"$bin/jf-loadgen" --endpoint "$(cat "$work/state/endpoint")" --sessions "$sessions" \
  --sample "$work/sample.json" --prefix lg- --type agx-xavier --hz "$hz" --seconds "$seconds" \
  ${lgrun[@]+"${lgrun[@]}"} > "$work/loadgen.out" 2>&1 &
pids+=($!)
if [ "$probes" -gt 0 ]; then
  "$bin/jf-loadgen" --endpoint "$(cat "$work/state/endpoint")" --sessions "$probes" \
    --sample "$work/sample.json" --prefix probe- --type agx-xavier --hz "$hz" \
    --seconds "$seconds" ${lgrun[@]+"${lgrun[@]}"} > "$work/probe.out" 2>&1 &
  pids+=($!)
fi
rss=() anon=() shm=() rows=()
dbfile() { find "$work/state" -name '*.db' | head -n 1; }
step=$(( seconds / 20 > 1 ? seconds / 20 : 1 ))
for _ in $(seq 1 20); do
  sleep "$step"
  rss+=("$(awk '/^VmRSS/ {print $2}' "/proc/$coord/status")")
  # What the resident size is made of: the heap and other private memory (RssAnon), and the
  # store's mapped files (RssFile, RssShmem: SQLite's WAL index is a shared mapping).
  anon+=("$(awk '/^RssAnon/ {print $2}' "/proc/$coord/status")")
  shm+=("$(awk '/^RssShmem/ {print $2}' "/proc/$coord/status")")
  if [ -n "$retention" ]; then
    q='PRAGMA busy_timeout=5000; SELECT count(*) FROM telemetry_sample'
    rows+=("$(sqlite3 "$(dbfile)" "$q" 2>/dev/null | tail -n 1)")
  fi
done
wait "${pids[1]}" || true
[ "$probes" = 0 ] || wait "${pids[2]}" || true
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
if [ -n "$retention" ]; then
  echo "acked_samples=$acked stored_samples=$stored" \
       "lost=not_computed (retention $retention deletes rows)"
  echo "telemetry_rows_series=$(IFS=,; echo "${rows[*]}")"
  max=0; for r in "${rows[@]}"; do [ "${r:-0}" -gt "$max" ] && max=$r; done
  echo "telemetry_rows_max=$max telemetry_rows_end=${rows[19]:-} retention=$retention"
else
  echo "acked_samples=$acked stored_samples=$stored lost=$(( acked > stored ? acked - stored : 0 ))"
fi
# kB figures as a comma-separated list of MB.
mb_series() { printf '%s,' "$@" | awk -F, '{for(i=1;i<NF;i++) printf "%s%.0f", (i>1?",":""), $i/1024}'; }
echo "rss_mb_series=$(mb_series "${rss[@]}")"
echo "rss_growth_mb_last_half=$(awk -v a="$half" -v b="$last" 'BEGIN {printf "%.1f", (b-a)/1024}')"
echo "rss_anon_mb_series=$(mb_series "${anon[@]}")"
echo "rss_shmem_mb_series=$(mb_series "${shm[@]}")"
if [ -n "$telemetry_bytes" ] && [ "$stored" -gt 0 ]; then
  # The telemetry tables' pages (dbstat), overflow pages included, per stored sample.
  echo "bytes_per_sample=$(( telemetry_bytes / stored )) store_file_mb=$(( $(stat -c %s "$db") / 1048576 ))"
fi
# The coordinator's own part of redispatch (its summary at exit: a run's end read to the next
# run.assign sent, over the last 4,096 at most).
sed -n 's/.*server: redispatch \(n=[0-9]* p50_ms=[0-9.]* p99_ms=[0-9.]* max_ms=[0-9.]*\) (since.*/coord_redispatch_\1/p' \
  "$work/coordinator.log" | tail -n 1 | sed 's/ / coord_redispatch_/g'
echo "loadgen: $final"
grep '^runs_ended=' "$work/loadgen.out" | tail -n 1 | sed 's/^/loadgen: /' || true
if [ "$probes" -gt 0 ]; then
  grep '^runs_ended=' "$work/probe.out" | tail -n 1 | sed 's/redispatch_/probe_redispatch_/g; s/^runs_ended=/probe_runs_ended=/' || true
fi
