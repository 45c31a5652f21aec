#!/usr/bin/env bash
# Issue #12's quality figures for the models, measured against ground truth the fitting code never
# reads: tables of the simulated AGX Orin (bench/simtable.c, every grid mode of one board) and the
# real AGX Orin's 4,368 modes (bench/orin-to-import.sh), loaded with `jetfleet import`, then
# fitted, transferred (auto, head, finetune), evaluated and asked for recommendations through
# the real `jetfleet` CLI.
# Self-contained: configures and builds BUILD_DIR (Release, benchmarks on), works in a temporary
# directory it removes. Prints name=value lines (and '#' comment lines saying what each is).
#
#   bench/analysis-quality.sh [BUILD_DIR]        default: build-bench
#
# Environment: JF_JOBS (build jobs, 2), JF_AQ_SEED (the simulated boards' seed, 7),
# JF_AQ_PICK_SEED (which 50 modes are profiled, 2024), JF_AQ_ORIN_CSV (the real Orin file;
# default ../shared/reference/orin-agx-powermodes/resnet-training.csv, skipped when absent).
set -euo pipefail

top="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$top/build-bench}"
seed="${JF_AQ_SEED:-7}"
pick_seed="${JF_AQ_PICK_SEED:-2024}"
orin_csv="${JF_AQ_ORIN_CSV:-$top/../shared/reference/orin-agx-powermodes/resnet-training.csv}"
type=orin-agx
board=sim-orin-agx-1
ref_w=resnet18-cifar10     # the reference workload, fully profiled
new_w=vgg11-cifar10        # a new GPU-bound workload: 50 modes profiled, transferred
hard_w=mobilenetv3-gld23k  # a loader-bound workload (JPEG decode on the CPU): the hard transfer
n_pick=50

echo "# building $build (Release, benchmarks)" >&2
cmake -S "$top" -B "$build" -DJF_BUILD_BENCH=ON -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$build" -j"${JF_JOBS:-2}" --target jetfleet jf-simtable jf-fit-time > /dev/null
bin="$build/bin"

work="$(mktemp -d "${TMPDIR:-/tmp}/jf-analysis-quality.XXXXXX")"
trap 'rm -rf "$work"' EXIT
store="$work/store.db"
log="$work/jetfleet.log"

jf() {
  if ! "$bin/jetfleet" --store "$store" "$@" 2>> "$log"; then
    echo "analysis-quality: jetfleet $* failed:" >&2
    tail -n 5 "$log" >&2
    exit 1
  fi
}

# value KEY TEXT: the number after KEY= in TEXT.
value() { sed -n "s/.*\\b$1=\\([-0-9.e+]*\\).*/\\1/p" <<< "$2" | head -n 1; }

# fit SWEEP WORKLOAD BOARD TARGET [KIND]: fits an mlp (or KIND), prints "ID CV_MAPE".
fit() {
  local out
  out="$(jf model fit --sweep "$1" --workload "$2" --board "$3" --target "$4" --kind "${5:-mlp}")"
  echo "$(value model "$out") $(value cv_mape_pct "$out")"
}

# xfit SWEEP WORKLOAD BOARD TARGET REF_ID METHOD: a transfer (auto|head|finetune|phys); prints "ID
# CV_MAPE KIND" and says on stderr which kind the fit chose.
xfit() {
  local out
  out="$(jf model fit --sweep "$1" --workload "$2" --board "$3" --target "$4" \
    --transfer-from "$5" --transfer-kind "$6")"
  echo "# transfer $6 of model $5 to $1 $4: $out" >&2
  echo "$(value model "$out") $(value cv_mape_pct "$out") $(sed -n 's/.* kind=\([a-z]*\).*/\1/p' <<< "$out")"
}

# evaluate MODEL SWEEP: the model's MAPE over the sweep's runs.
evaluate() { value mape_pct "$(jf model eval --model "$1" --sweep "$2")"; }

# split IN OUT_PICK OUT_REST: the rows of n_pick distinct modes (seeded), and the others.
split_modes() {
  local cols
  cols="$(head -n 1 "$1" | tr ',' '\n' |
    grep -n -E '^(cores|cpu_freq_hz|cpu_khz|gpu_freq_hz|emc_freq_hz)$' | cut -d: -f1 | paste -sd,)"
  tail -n +2 "$1" | cut -d, -f"$cols" | sort -u |
    shuf -n "$n_pick" --random-source=<(yes "$pick_seed") > "$2.keys"
  awk -F, -v cols="$cols" -v a="$2" -v b="$3" '
    NR == FNR { k[$0] = 1; next }
    FNR == 1 { print > a; print > b; next }
    { split(cols, c, ","); key = $c[1]; for (i = 2; i in c; i++) key = key "," $c[i]
      if (key in k) print > a; else print > b }' "$2.keys" "$1"
}

for w in "$ref_w" "$new_w" "$hard_w"; do
  "$bin/jf-simtable" --type "$type" --workload "$w" --boards 1 --seed "$seed" --modes grid \
    -o "$work/$w.csv" >> "$log" 2>&1
  jf import --sweep-name "$w" "$work/$w.csv" > /dev/null
  split_modes "$work/$w.csv" "$work/$w-50.csv" "$work/$w-rest.csv"
  jf import --sweep-name "$w-50" "$work/$w-50.csv" > /dev/null
  jf import --sweep-name "$w-rest" "$work/$w-rest.csv" > /dev/null
done
modes="$(($(wc -l < "$work/$new_w.csv") - 1))"
echo "# simulated $type, board $board, seed $seed: $((modes / 3)) grid modes per workload," \
  "3 epochs each (epoch 0 the warm-up, left out); mlp models, 5-fold CV"

# All modes profiled: cross-validated MAPE.
read -r new_t new_t_cv <<< "$(fit "$new_w" "$new_w" "$board" time)"
read -r new_p new_p_cv <<< "$(fit "$new_w" "$new_w" "$board" power)"
echo "# all modes of $new_w profiled: 5-fold cross-validated MAPE (percent)"
echo "fullprofile_time_mape=$new_t_cv"
echo "fullprofile_power_mape=$new_p_cv"
read -r _ hard_t_cv <<< "$(fit "$hard_w" "$hard_w" "$board" time)"
read -r _ hard_p_cv <<< "$(fit "$hard_w" "$hard_w" "$board" power)"
echo "fullprofile_${hard_w%%-*}_time_mape=$hard_t_cv"
echo "fullprofile_${hard_w%%-*}_power_mape=$hard_p_cv"

# Transfer: the reference workload's models, retrained on 50 profiled modes of the new one,
# scored on every other mode.
read -r ref_t _ <<< "$(fit "$ref_w" "$ref_w" "$board" time)"
read -r ref_p _ <<< "$(fit "$ref_w" "$ref_w" "$board" power)"
# The same reference fitted as phys models: where the phys transfer starts (its other starts are
# the default ones; docs/analysis.md "Physical models").
read -r ref_phys_t _ <<< "$(fit "$ref_w" "$ref_w" "$board" time phys)"
read -r ref_phys_p _ <<< "$(fit "$ref_w" "$ref_w" "$board" power phys)"
# transfer_eval PREFIX SWEEP50 WORKLOAD BOARD REST TIME_REF POWER_REF: the transfers of both
# models with each method (auto: chosen by cross-validation among the head's forms, fine-tuning
# and a phys model from the default starts; finetune: the mlp fine-tuned, the method before the
# head; head; phys: from the phys references' parameters or the default starts, whichever fits
# the profiled modes better), MAPE over the REST sweep's modes. Sets x_t x_p (auto's ids).
transfer_eval() {
  local m id_t id_p cv_t cv_p k_t k_p sfx r_t r_p
  for m in auto finetune head phys; do
    r_t="$6"
    r_p="$7"
    if [ "$m" = phys ]; then
      r_t="$ref_phys_t"
      r_p="$ref_phys_p"
    fi
    read -r id_t cv_t k_t <<< "$(xfit "$2" "$3" "$4" time "$r_t" "$m")"
    read -r id_p cv_p k_p <<< "$(xfit "$2" "$3" "$4" power "$r_p" "$m")"
    sfx=""
    [ "$m" = auto ] || sfx="_$m"
    echo "# $1 $m: time kind $k_t (cv $cv_t %), power kind $k_p (cv $cv_p %)"
    echo "${1}${sfx}_time_mape=$(evaluate "$id_t" "$5")"
    echo "${1}${sfx}_power_mape=$(evaluate "$id_p" "$5")"
    if [ "$m" = auto ]; then
      x_t="$id_t"
      x_p="$id_p"
      x_p_cv="$cv_p"
    elif [ "$m" = phys ]; then
      y_t="$id_t"
      y_p="$id_p"
    fi
  done
}
echo "# $n_pick modes of $new_w profiled, transferred from $ref_w; MAPE over the other modes"
transfer_eval transfer50 "$new_w-50" "$new_w" "$board" "$new_w-rest" "$ref_t" "$ref_p"
new_x_t="$x_t"
new_x_p="$x_p"
new_x_p_cv="$x_p_cv"
new_y_t="$y_t"
new_y_p="$y_p"
echo "# the same from $ref_w to the loader-bound $hard_w"
transfer_eval "transfer50_${hard_w%%-*}" "$hard_w-50" "$hard_w" "$board" "$hard_w-rest" \
  "$ref_t" "$ref_p"

# Recommendations under power budgets spread over the measured range, against the ground truth:
# each mode's measured mean time and power over epochs 1..
# truth CSV OUT: lines "mode time power" from an import file (its header names the columns).
truth() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; cpu = c["cpu_freq_hz"] ? c["cpu_freq_hz"] : c["cpu_khz"]; next }
    $c["epoch"] > 0 {
      k = $c["cores"] "," $cpu "," $c["gpu_freq_hz"] "," $c["emc_freq_hz"]
      st[k] += $c["epoch_time_s"]; sp[k] += $c["mean_power_w"]; n[k]++ }
    END { for (k in n) printf "%s %.6f %.6f\n", k, st[k] / n[k], sp[k] / n[k] }' "$1" > "$2"
}
truth "$work/$new_w.csv" "$work/truth.txt"
# recommend_eval PREFIX TIME_ID POWER_ID [--margin M]: recommendations for workload rec_w on board
# rec_board over sweep rec_sweep (every mode measured) under budgets spread over rec_truth's power
# range; the recommended mode's measured time and power are recommend's own measured_* figures
# for it; prints PREFIX_gap_pct (the worst) and PREFIX_over_budget (how many).
budgets=8
rec_w="$new_w"
rec_board="$board"
rec_sweep="$new_w"
rec_truth="$work/truth.txt"
recommend_eval() {
  local worst=0 over=0 i budget out gap is_over pmin pmax
  read -r pmin pmax <<< "$(awk '{ if (NR == 1 || $3 < lo) lo = $3; if ($3 > hi) hi = $3 }
    END { print lo, hi }' "$rec_truth")"
  for i in $(seq 1 "$budgets"); do
    budget="$(awk -v lo="$pmin" -v hi="$pmax" -v i="$i" -v n="$budgets" \
      'BEGIN { printf "%.3f", lo + (hi - lo) * i / (n + 1) }')"
    out="$(jf recommend --workload "$rec_w" --board "$rec_board" --sweep "$rec_sweep" \
      --power-budget "$budget" --time-model "$2" --power-model "$3" "${@:4}")"
    read -r gap is_over <<< "$(awk -v rt="$(value measured_time_s "$out")" \
      -v rp="$(value measured_power_w "$out")" -v b="$budget" '
      $3 <= b && (best == "" || $2 < best) { best = $2 }
      END { if (rt == "") { print "nan 0"; exit }
            printf "%.3f %d\n", 100 * (rt - best) / best, (rp > b) }' "$rec_truth")"
    echo "# $1: budget ${budget} W, margin $(value margin_pct "$out") %:" \
      "$(grep '^mode ' <<< "$out"), gap ${gap} %, over budget: $is_over"
    worst="$(awk -v a="$worst" -v b="$gap" 'BEGIN { print (b == "nan" || b + 0 > a + 0) ? b : a }')"
    over=$((over + is_over))
  done
  echo "${1}_gap_pct=$worst"
  echo "${1}_over_budget=$over"
}

echo "# recommend under $budgets power budgets between the lowest and highest measured mode" \
  "power of $new_w, default margin; gap = the recommended mode's measured" \
  "time over the fastest measured mode within the budget. recommend: with the mlp models of all" \
  "modes; recommend_transfer50: with the models transferred from 50 modes; default margin: the" \
  "power model's 95th-percentile held-out underestimate"
recommend_eval recommend "$new_t" "$new_p"
recommend_eval recommend_transfer50 "$new_x_t" "$new_x_p"
old_margin="$(awk -v c="$new_x_p_cv" 'BEGIN { printf "%.4f", 3 * c }')"
echo "# the same with the margin used before: 3 x the transferred power model's CV MAPE" \
  "($old_margin %)"
recommend_eval recommend_transfer50_3xmape "$new_x_t" "$new_x_p" --margin "$old_margin"
echo "# with the phys models transferred from the phys references (transfer50_phys)"
recommend_eval recommend_transfer50_phys "$new_y_t" "$new_y_p"

# Fitting time on 4,400 modes, and the models on the real Orin (80 % train, 20 % held out).
echo "# bench/fit-time.c: fit times on a 4,400-mode surface; fit4400_s is model fit's default" \
  "(linear, with its cross-validation)"
if [ -r "$orin_csv" ]; then
  "$bin/jf-fit-time" "$orin_csv"
else
  "$bin/jf-fit-time"
fi

# Real data nobody here wrote into the simulator: the real AGX Orin's ResNet modes, imported.
if [ -r "$orin_csv" ]; then
  "$top/bench/orin-to-import.sh" -i "$orin_csv" -o "$work/real.csv" 2>> "$log"
  jf import --sweep-name real "$work/real.csv" > /dev/null
  split_modes "$work/real.csv" "$work/real-50.csv" "$work/real-rest.csv"
  jf import --sweep-name real-50 "$work/real-50.csv" > /dev/null
  jf import --sweep-name real-rest "$work/real-rest.csv" > /dev/null
  read -r _ r_t_cv <<< "$(fit real resnet-powertrain orin-agx-real time)"
  read -r _ r_p_cv <<< "$(fit real resnet-powertrain orin-agx-real power)"
  echo "# the real AGX Orin (4,368 modes, imported): all modes profiled, 5-fold CV MAPE"
  echo "real_fullprofile_time_mape=$r_t_cv"
  echo "real_fullprofile_power_mape=$r_p_cv"
  echo "# $n_pick real modes profiled, transferred from the simulated Orin's $ref_w models;" \
    "MAPE over the other real modes"
  transfer_eval real_transfer50 real-50 resnet-powertrain orin-agx-real real-rest \
    "$ref_t" "$ref_p"
  rec_w=resnet-powertrain
  rec_board=orin-agx-real
  rec_sweep=real
  rec_truth="$work/real-truth.txt"
  truth "$work/real.csv" "$rec_truth"
  echo "# recommend on the real Orin under $budgets budgets with the models transferred from 50" \
    "modes (auto; phys). The truth is one noisy measurement per mode: the fastest within a" \
    "budget may be a lucky one"
  recommend_eval real_recommend_transfer50 "$x_t" "$x_p"
  recommend_eval real_recommend_transfer50_phys "$y_t" "$y_p"
  read -r rs_t _ <<< "$(fit real-50 resnet-powertrain orin-agx-real time)"
  read -r rs_p _ <<< "$(fit real-50 resnet-powertrain orin-agx-real power)"
  echo "# the same $n_pick real modes, mlp from scratch (no transfer)"
  echo "real_scratch50_time_mape=$(evaluate "$rs_t" real-rest)"
  echo "real_scratch50_power_mape=$(evaluate "$rs_p" real-rest)"
  read -r rs_t _ <<< "$(fit real-50 resnet-powertrain orin-agx-real time phys)"
  read -r rs_p _ <<< "$(fit real-50 resnet-powertrain orin-agx-real power phys)"
  echo "# the same $n_pick real modes, phys from its default starts (no reference)"
  echo "real_phys50_time_mape=$(evaluate "$rs_t" real-rest)"
  echo "real_phys50_power_mape=$(evaluate "$rs_p" real-rest)"
else
  echo "real=skipped (cannot read $orin_csv)"
fi
