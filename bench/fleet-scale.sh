#!/usr/bin/env bash
# Fleet scale (issues #11 and #17): one coordinator and N protocol sessions from jf-loadgen
# (bench/loadgen.c) streaming simulated telemetry at HZ. After SECONDS the coordinator is killed
# with SIGKILL and started again on the same port; the sessions register again and stream for
# AFTER more seconds, then wait for their last acknowledgements. From the first second to 3 s
# before the kill, P probe boards in a second jf-loadgen (few sessions: its own loop adds next to
# nothing) stream at HZ too and end a run every R to 2R s: the time from a run's end leaving to
# the board's next run.assign arriving, end to end, is the dispatch latency under the fleet's
# load. Prints name=value figures:
#   agents samples_per_s lost dispatch_p99_ms rss_mb reregister_s hellos_per_board
# (definitions in bench/README.md "fleet-scale.sh"). Everything runs on 127.0.0.1 and is removed
# at the end.
#   bench/fleet-scale.sh [--sessions N] [--seconds S] [--after S] [--hz HZ] [--bin-dir DIR]
#                        [--batch-ms MS] [--stops N] [--no-restart] [--no-credit]
#                        [--probe-sessions P] [--probe-run-seconds R]
#                        [--check MAX_HELLOS_PER_BOARD]
# --bin-dir uses programs already built (else a Release tree in build-bench/ is built first).
# --batch-ms sets the telemetry messages' length (default 1000 ms of samples each). --stops N
# stops the coordinator (SIGSTOP) N times for 2 s, 2 s apart, in the middle of the first phase.
# --no-restart skips the kill -9; --no-credit makes the sessions behave as agents without
# credit. --probe-sessions (default 40; 0: none, and no dispatch_p99_ms) and --probe-run-seconds
# (default 2) set the probes. --check exits 1 unless lost=0, every session was welcomed again
# after the restart, none needed more than MAX_HELLOS_PER_BOARD hellos for it, the coordinator
# granted credit, no session had more in flight than the largest grant and, with probes, a
# probe's run was dispatched again after its end (integration.fleet_scale, fleet_credit).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/bench-bin.sh
. "$top/bench/bench-bin.sh"
# shellcheck source=bench/loadgen-fleet.sh
. "$top/bench/loadgen-fleet.sh"
sessions=1000 seconds=30 after=30 hz=10 bin="" check="" batch_ms=1000 stops=0 restart=1
probes=40 probe_run_s=2
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
    --probe-sessions) probes=$2; shift 2 ;;
    --probe-run-seconds) probe_run_s=$2; shift 2 ;;
    *) echo "usage: $0 [--sessions N] [--seconds S] [--after S] [--hz HZ] [--bin-dir DIR]" \
            "[--batch-ms MS] [--stops N] [--no-restart] [--no-credit]" \
            "[--probe-sessions P] [--probe-run-seconds R]" \
            "[--check MAX_HELLOS_PER_BOARD]" >&2; exit 2 ;;
  esac
done
bin=$(bench_bin_dir "$bin")
work=$(mktemp -d "${TMPDIR:-/tmp}/jf-scale.XXXXXX")
coord="" loadgen="" prober=""
cleanup() {
  for p in $prober $loadgen $coord; do kill -KILL "$p" 2>/dev/null || true; done
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
# The probes run from 1 s after the sessions start to 3 s before the kill (their runs' ends do
# not wait for a coordinator that is not there), each ending a run every R to 2R s.
probe_s=$(( seconds - 4 ))
if [ "$probes" -gt 0 ] && [ "$probe_s" -lt 5 ]; then
  echo "fleet-scale: --seconds $seconds leaves the probes under 5 s: use --probe-sessions 0" >&2
  exit 2
fi
write_loadgen_fleet "$work" "$sessions" "$hz" scale 1 "" "$probes"
if [ "$probes" -gt 0 ]; then
  sed -e 's/^name: .*/name: probes/' -e 's/^target: .*/target: {labels: [probe]}/' \
      -e "s/^repeats: .*/repeats: $(( probe_s / probe_run_s + 2 ))/" \
      "$work/sweep.yaml" > "$work/probe-sweep.yaml"
fi
export JETFLEET_CONFIG=$work/fleet.yaml
ulimit -n "$(ulimit -Hn)"
start_coordinator
endpoint=$(cat "$work/state/endpoint")
# The restarted coordinator must bind the same port: the sessions keep their endpoint.
sed -i "s|tcp://127.0.0.1:\*|$endpoint|" "$work/fleet.yaml"
"$bin/jetfleet" sweep submit "$work/sweep.yaml" > /dev/null
[ "$probes" = 0 ] || "$bin/jetfleet" sweep submit "$work/probe-sweep.yaml" > /dev/null
"$bin/jf-loadgen" --endpoint "$endpoint" --sessions "$sessions" --sample "$work/sample.json" \
  --prefix lg- --type agx-xavier --hz "$hz" --seconds $(( seconds + after )) \
  --batch-ms "$batch_ms" ${lgopts[@]+"${lgopts[@]}"} > "$work/loadgen.out" 2> "$work/loadgen.err" &
loadgen=$!
if [ "$probes" -gt 0 ]; then
  sleep 1
  "$bin/jf-loadgen" --endpoint "$endpoint" --sessions "$probes" --sample "$work/sample.json" \
    --prefix probe- --type agx-xavier --hz "$hz" --seconds "$probe_s" --batch-ms "$batch_ms" \
    --run-seconds "$probe_run_s" --run-spread 100 ${lgopts[@]+"${lgopts[@]}"} \
    > "$work/probe.out" 2> "$work/probe.err" &
  prober=$!
fi

# SIGSTOP bursts in the middle of the first phase: a coordinator that reads nothing for 2 s.
quiet=$(( seconds - 4 * stops - (probes > 0) ))
sleep $(( quiet > 0 ? quiet / 2 : 0 ))
for _ in $(seq 1 "$stops"); do
  kill -STOP "$coord"; sleep 2; kill -CONT "$coord"; sleep 2
done
sleep $(( quiet > 0 ? quiet - quiet / 2 : 0 ))
if [ -n "$prober" ]; then
  wait "$prober" || true # it has ended, and its last acks come before the kill
  prober=""
fi
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
# The probes' figures; 0 (or not_measured) without probes.
pfigure() {
  if [ "$probes" -gt 0 ]; then
    sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" "$work/probe.out" | tail -n 1
  else echo "${2:-0}"; fi
}
db=$(find "$work/state" -name '*.db' | head -n 1)
stored=$(sqlite3 "$db" 'SELECT count(*) FROM telemetry')
# The store holds the probes' samples too: they are counted with the sessions'.
produced=$(( $(figure samples) + $(pfigure samples) ))
unacked=$(( $(figure unacked_samples) + $(pfigure unacked_samples) ))
rereg=$(figure reregistered)
dropped=$(( $(figure dropped_samples) + $(pfigure dropped_samples) ))
lost=$(( produced - dropped > stored ? produced - dropped - stored : 0 ))
echo "agents=$sessions samples_per_s=$(figure samples_per_s) lost=$lost" \
     "dispatch_p99_ms=$(pfigure redispatch_p99_ms not_measured) rss_mb=$rss_mb" \
     "reregister_s=$(figure reregister_s) hellos_per_board=$(figure hellos_per_board)"
echo "probes=$probes dispatch_n=$(pfigure redispatch_n) dispatch_p50_ms=$(pfigure redispatch_p50_ms)" \
     "dispatch_max_ms=$(pfigure redispatch_max_ms) probe_samples_per_s=$(pfigure samples_per_s)" \
     "register_dispatch_p50_ms=$(figure dispatch_p50_ms)" \
     "register_dispatch_p99_ms=$(figure dispatch_p99_ms)"
acked=$(( $(figure acked_samples) + $(pfigure acked_samples) ))
# lost counts every produced sample not stored, those still unacknowledged at the end (held by
# their session, as an agent's spool would) included, except those of attempts the coordinator
# dropped (dropped_samples: their lease expired, the run is run again); lost_acked counts
# acknowledged samples that are not stored.
echo "hz=$hz seconds=$seconds after=$after produced_samples=$produced stored_samples=$stored" \
     "unacked_at_end=$unacked dropped_samples=$dropped acked_samples=$acked lost_acked=$(( acked > stored ? acked - stored : 0 ))"
echo "reregistered=$rereg hellos_per_board_max=$(figure hellos_per_board_max)" \
     "kicked_hellos=$(figure kicked_hellos) welcome_wait_max_s=$(figure welcome_wait_max_s)" \
     "rss_after_restart_mb=$rss_after_mb" \
     "ack_p50_ms=$(figure ack_p50_ms) ack_p99_ms=$(figure ack_p99_ms)"
echo "credit_min=$(figure credit_min) credit_max=$(figure credit_max)" \
     "in_flight_max=$(figure in_flight_max) in_flight_total_max=$(figure in_flight_total_max)"
echo "loadgen: $(grep '^sessions=' "$work/loadgen.out" | tail -n 1)"
[ "$probes" = 0 ] || echo "probes: $(grep '^sessions=' "$work/probe.out" | tail -n 1)"
if [ -n "$check" ]; then
  max=$(figure hellos_per_board_max)
  ok=1
  [ "$lost" -eq 0 ] || { echo "FAIL: lost=$lost" >&2; ok=0; }
  if [ "$restart" = 1 ]; then
    [ "${rereg%/*}" = "$sessions" ] || { echo "FAIL: reregistered=$rereg" >&2; ok=0; }
    [ "${max:-999}" -le "$check" ] || { echo "FAIL: hellos_per_board_max=$max > $check" >&2; ok=0; }
  fi
  rn=$(pfigure redispatch_n)
  if [ "$probes" -gt 0 ] && [ "${rn:-0}" -lt 1 ]; then
    echo "FAIL: no probe run was dispatched again after its end" >&2; ok=0
  fi
  cmax=$(figure credit_max) fmax=$(figure in_flight_max)
  [ "${cmax:-0}" -ge 1 ] || { echo "FAIL: the coordinator granted no credit" >&2; ok=0; }
  [ "${fmax:-999}" -le "${cmax:-0}" ] ||
    { echo "FAIL: in_flight_max=$fmax > credit_max=$cmax" >&2; ok=0; }
  [ "$ok" = 1 ] || exit 1
fi
