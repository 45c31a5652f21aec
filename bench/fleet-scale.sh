#!/usr/bin/env bash
# Fleet scale (issues #11 and #17): one coordinator and N protocol sessions from jf-loadgen
# (bench/loadgen.c) streaming simulated telemetry at HZ. After SECONDS the coordinator is killed
# with SIGKILL and started again on the same port; the sessions register again and stream for
# AFTER more seconds, then wait for their last acknowledgements. Prints name=value figures:
#   agents samples_per_s lost dispatch_p99_ms rss_mb reregister_s hellos_per_board
# (definitions in bench/README.md "fleet-scale.sh"). Everything runs on 127.0.0.1 and is removed
# at the end.
#   bench/fleet-scale.sh [--sessions N] [--seconds S] [--after S] [--hz HZ] [--bin-dir DIR]
#                        [--batch-ms MS] [--stops N] [--no-restart] [--no-credit]
#                        [--check MAX_HELLOS_PER_BOARD]
# --bin-dir uses programs already built (else a Release tree in build-bench/ is built first).
# --batch-ms sets the telemetry messages' length (default 1000 ms of samples each). --stops N
# stops the coordinator (SIGSTOP) N times for 2 s, 2 s apart, in the middle of the first phase.
# --no-restart skips the kill -9; --no-credit makes the sessions behave as agents without
# credit. --check exits 1 unless lost=0, every session was welcomed again after the restart,
# none needed more than MAX_HELLOS_PER_BOARD hellos for it, the coordinator granted credit and
# no session had more in flight than the largest grant (integration.fleet_scale, fleet_credit).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/loadgen-fleet.sh
. "$top/bench/loadgen-fleet.sh"
sessions=1000 seconds=30 after=30 hz=10 bin="" check="" batch_ms=1000 stops=0 restart=1
lgopts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sessions) sessions=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --after) after=$2; shift 2 ;;
    --hz) hz=$2; shift 2 ;;
    --bin-dir) bin=$2; shift 2 ;;
    --check) check=$2; shift 2 ;;
    --batch-ms) batch_ms=$2; shift 2 ;;
    --stops) stops=$2; shift 2 ;;
    --no-restart) restart=0; shift ;;
    --no-credit) lgopts+=(--no-credit); shift ;;
    *) echo "usage: $0 [--sessions N] [--seconds S] [--after S] [--hz HZ] [--bin-dir DIR]" \
            "[--batch-ms MS] [--stops N] [--no-restart] [--no-credit]" \
            "[--check MAX_HELLOS_PER_BOARD]" >&2; exit 2 ;;
  esac
done
if [ -z "$bin" ]; then
  build=${JF_BENCH_BUILD_DIR:-$top/build-bench}
  "$top/scripts/deps.sh" >/dev/null
  JF_BUILD_TYPE=Release "$top/scripts/build.sh" "$build" -DJF_BUILD_BENCH=ON >/dev/null
  bin=$build/bin
fi
bin=$(cd "$bin" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/jf-scale.XXXXXX")
coord="" loadgen=""
cleanup() {
  for p in $loadgen $coord; do kill -KILL "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

start_coordinator() {
  rm -f "$work/state/endpoint"
  "$bin/jetfleet-coordinator" --config "$work/fleet.yaml" --insecure-loopback \
    >> "$work/coordinator.log" 2>&1 &
  coord=$!
  for _ in $(seq 300); do [ -s "$work/state/endpoint" ] && return 0; sleep 0.1; done
  echo "fleet-scale: the coordinator did not start; its log:" >&2
  tail -n 20 "$work/coordinator.log" >&2
  exit 1
}
peak_rss_mb() { awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }

if ! (cd "$work" && "$bin/jetfleet-agent" --platform sim:agx-xavier --sample-once) \
  > "$work/sample.json" 2> "$work/sample.err"; then
  echo "fleet-scale: cannot take a sample from $bin/jetfleet-agent:" >&2
  cat "$work/sample.err" >&2
  exit 1
fi
write_loadgen_fleet "$work" "$sessions" "$hz" scale
export JETFLEET_CONFIG=$work/fleet.yaml
ulimit -n "$(ulimit -Hn)"
start_coordinator
endpoint=$(cat "$work/state/endpoint")
# The restarted coordinator must bind the same port: the sessions keep their endpoint.
sed -i "s|tcp://127.0.0.1:\*|$endpoint|" "$work/fleet.yaml"
"$bin/jetfleet" sweep submit "$work/sweep.yaml" > /dev/null
"$bin/jf-loadgen" --endpoint "$endpoint" --sessions "$sessions" --sample "$work/sample.json" \
  --prefix lg- --type agx-xavier --hz "$hz" --seconds $(( seconds + after )) \
  --batch-ms "$batch_ms" ${lgopts[@]+"${lgopts[@]}"} > "$work/loadgen.out" 2> "$work/loadgen.err" &
loadgen=$!

# SIGSTOP bursts in the middle of the first phase: a coordinator that reads nothing for 2 s.
quiet=$(( seconds - 4 * stops ))
sleep $(( quiet > 0 ? quiet / 2 : 0 ))
for _ in $(seq 1 "$stops"); do
  kill -STOP "$coord"; sleep 2; kill -CONT "$coord"; sleep 2
done
sleep $(( quiet > 0 ? quiet - quiet / 2 : 0 ))
rss_mb=$(peak_rss_mb "$coord")
if [ "$restart" = 1 ]; then
  { kill -KILL "$coord"; wait "$coord"; } 2>/dev/null || true
  kill -USR1 "$loadgen" # the clock of reregister_s starts before the new coordinator does
  start_coordinator
fi
wait "$loadgen" || true
loadgen=""
rss_after_mb=$(peak_rss_mb "$coord")
kill -TERM "$coord"
wait "$coord" || true
coord=""

figure() { sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" "$work/loadgen.out" | tail -n 1; }
db=$(find "$work/state" -name '*.db' | head -n 1)
stored=$(sqlite3 "$db" 'SELECT count(*) FROM telemetry')
produced=$(figure samples)
unacked=$(figure unacked_samples)
rereg=$(figure reregistered)
dropped=$(figure dropped_samples)
lost=$(( produced - dropped > stored ? produced - dropped - stored : 0 ))
echo "agents=$sessions samples_per_s=$(figure samples_per_s) lost=$lost" \
     "dispatch_p99_ms=$(figure dispatch_p99_ms) rss_mb=$rss_mb" \
     "reregister_s=$(figure reregister_s) hellos_per_board=$(figure hellos_per_board)"
acked=$(figure acked_samples)
# lost counts every produced sample not stored, those still unacknowledged at the end (held by
# their session, as an agent's spool would) included, except those of attempts the coordinator
# dropped (dropped_samples: their lease expired, the run is run again); lost_acked counts
# acknowledged samples that are not stored.
echo "hz=$hz seconds=$seconds after=$after produced_samples=$produced stored_samples=$stored" \
     "unacked_at_end=$unacked dropped_samples=$dropped acked_samples=$acked lost_acked=$(( acked > stored ? acked - stored : 0 ))"
echo "reregistered=$rereg hellos_per_board_max=$(figure hellos_per_board_max)" \
     "kicked_hellos=$(figure kicked_hellos) welcome_wait_max_s=$(figure welcome_wait_max_s)" \
     "rss_after_restart_mb=$rss_after_mb dispatch_p50_ms=$(figure dispatch_p50_ms)" \
     "ack_p50_ms=$(figure ack_p50_ms) ack_p99_ms=$(figure ack_p99_ms)"
echo "credit_min=$(figure credit_min) credit_max=$(figure credit_max)" \
     "in_flight_max=$(figure in_flight_max) in_flight_total_max=$(figure in_flight_total_max)"
echo "loadgen: $(grep '^sessions=' "$work/loadgen.out" | tail -n 1)"
if [ -n "$check" ]; then
  max=$(figure hellos_per_board_max)
  ok=1
  [ "$lost" -eq 0 ] || { echo "FAIL: lost=$lost" >&2; ok=0; }
  if [ "$restart" = 1 ]; then
    [ "${rereg%/*}" = "$sessions" ] || { echo "FAIL: reregistered=$rereg" >&2; ok=0; }
    [ "${max:-999}" -le "$check" ] || { echo "FAIL: hellos_per_board_max=$max > $check" >&2; ok=0; }
  fi
  cmax=$(figure credit_max) fmax=$(figure in_flight_max)
  [ "${cmax:-0}" -ge 1 ] || { echo "FAIL: the coordinator granted no credit" >&2; ok=0; }
  [ "${fmax:-999}" -le "${cmax:-0}" ] ||
    { echo "FAIL: in_flight_max=$fmax > credit_max=$cmax" >&2; ok=0; }
  [ "$ok" = 1 ] || exit 1
fi
