#!/usr/bin/env bash
# trials_to_failure.sh BUILD_DIR [SEEDS [BUDGET [PROGRAM...]]] -- how many trials
# each strategy needs to find each buggy program in tests/programs, as a
# Markdown table on stdout (progress on stderr).
#
#   random, pct:2, pct:3, pos, surw, auto: `racelab exec --stop-at-first-failure`
#     with --seed 1..SEEDS (default 5), at most BUDGET trials each (default
#     1000). "found k/S": seeds that failed within the budget; "median" and
#     "worst" count a seed that did not as >BUDGET, so a median of >BUDGET
#     means most seeds missed.
#   dfs:2, dpor:2: deterministic (the seed changes nothing), one run: the
#     schedules explored up to and including the first failing one; "none of
#     all N" when the bound's whole space (N schedules) holds: the bug needs
#     more preemptions than 2.
#
# The trial count is the summary's "first failure trial N" (0-based) + 1: the
# cell runs its trials one after another and stops at that one. The last line
# is the throughput: trials run / seconds spent inside the cells (the summary's
# own figure, without racelab's start-up).
#
# Seeds 1..10 at budget 1000 took 22 min on a loaded 2-core machine (docs/RESULTS.md,
# "`racelab exec`: trials to the first failure"), about half of it racelab's start-up per run (~0.9 s); the
# default, half that.
#
# PROGRAM...: a subset by name (default: every buggy program that was built).
# tensor_lost_update runs with the op-points preload and RACELAB_OP_POINTS as
# op_points_check.sh does; it is skipped when LibTorch op points are not built.
# Every program is run as check_program.sh runs it (--let-go-ms 2000: no let-go
# on a loaded machine). Exit 0 when the table is complete, 1 when a run ended
# with neither "held" (0) nor "found" (1).
set -euo pipefail
build=${1:?usage: trials_to_failure.sh BUILD_DIR [SEEDS [BUDGET [PROGRAM...]]]}
seeds=${2:-5} budget=${3:-1000}
shift $(($# < 3 ? $# : 3))
build=$(cd "$build" && pwd)
racelab=$build/racelab
progs=$build/tests/programs
op_points=$build/libracelab_op_points_preload.so
[ -x "$racelab" ] || { echo "trials_to_failure.sh: $racelab: not built" >&2; exit 3; }

all=(lost_update check_then_act order_violation lock_order missed_signal double_checked three_preemptions
     eight_threads marked_point plain_race tensor_lost_update job_board hundred_threads clock_check_then_act
     barrier_deadlock self_relock exited_holder)
[ $# -gt 0 ] && all=("$@")
sampled=(random pct:2 pct:3 pos surw auto)
deterministic=(dfs:2 dpor:2)

# The flags one program needs, in the array `flags`.
flags_for() {
  flags=(--let-go-ms 2000 --timeout 20)
  if [ "$1" = tensor_lost_update ]; then
    flags=(--let-go-ms 2000 --timeout 30 --env "LD_PRELOAD=$op_points" --env RACELAB_OP_POINTS=aten::fill_)
  fi
}

total_trials=0 total_s=0
# run PROGRAM STRATEGY SEED: sets `found` (trials to the first failure, or
# empty) and adds to the totals.
run() {
  local out rc
  set +e
  out=$("$racelab" exec -s "$2" --seed "$3" -n "$budget" --stop-at-first-failure -q "${flags[@]}" -- "$progs/$1" 2>&1)
  rc=$?
  set -e
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
    echo "trials_to_failure.sh: $1 / $2 / seed $3: exit $rc" >&2
    echo "$out" >&2
    exit 1
  fi
  found=$(sed -n 's/^  first failure *trial \([0-9]*\).*/\1/p' <<<"$out")
  [ -n "$found" ] && found=$((found + 1))
  read -r n s < <(sed -n 's/.*: \([0-9]*\) trials in \([0-9.]*\) s .*/\1 \2/p' <<<"$out")
  total_trials=$((total_trials + n))
  complete=no
  grep -Eq '^  (dfs verdict +complete|search +dpor complete)' <<<"$out" && complete=yes
  total_s=$(awk -v a="$total_s" -v b="$s" 'BEGIN { print a + b }')
}

echo "| program | strategy | found k/S | median trials | worst |"
echo "|---|---|---|---|---|"
for p in "${all[@]}"; do
  if [ ! -x "$progs/$p" ] || { [ "$p" = tensor_lost_update ] && [ ! -f "$op_points" ]; }; then
    echo "trials_to_failure.sh: $p: not built, skipped" >&2
    continue
  fi
  flags_for "$p"
  for st in "${sampled[@]}"; do
    counts=()
    for seed in $(seq 1 "$seeds"); do
      run "$p" "$st" "$seed"
      counts+=("${found:-miss}")
    done
    # Misses count as budget + 1 (after every count) and print as >BUDGET.
    printf '%s\n' "${counts[@]}" | sed "s/miss/$((budget + 1))/" | sort -n |
      awk -v b="$budget" -v p="$p" -v st="$st" '
        { v[NR] = $1 + 0; if (v[NR] <= b) k++ }
        END {
          n = NR
          med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
          printf "| %s | %s | %d/%d | %s | %s |\n", p, st, k, n, (med > b ? ">" b : med), (v[n] > b ? ">" b : v[n])
        }'
    echo "trials_to_failure.sh: $p / $st done" >&2
  done
  for st in "${deterministic[@]}"; do
    run "$p" "$st" 1
    if [ -n "$found" ]; then
      echo "| $p | $st | 1/1 | $found | $found |"
    elif [ "$complete" = yes ]; then
      # The bound covers every schedule and none fails: the bug needs more preemptions.
      echo "| $p | $st | 0/1 | none of all $n | - |"
    else
      echo "| $p | $st | 0/1 | >$budget | >$budget |"
    fi
  done
done
echo
awk -v n="$total_trials" -v s="$total_s" -v seeds="$seeds" -v b="$budget" 'BEGIN {
  printf "%d trials in %.1f s inside the cells: %.0f trials/s (seeds 1..%d, budget %d)\n", n, s, (s > 0 ? n / s : 0), seeds, b }'
