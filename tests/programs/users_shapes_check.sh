#!/usr/bin/env bash
# users_shapes_check.sh RACELAB DIR -- racelab exec on programs shaped like
# users' code (DIR holds the built tests/programs):
#  1. pollers (sched_yield, usleep) are not livelocks under pct:3 or auto,
#     and the job board's real crash is found by both; the fix holds;
#  2. deadlock messages of programs linked without -rdynamic name the locks
#     from the symbol table, say "which it already holds" for a self-relock
#     and "which has exited" for a lock whose holder ended;
#  3. a thread that spins with no scheduling point and nobody else to run is
#     named, with "a spin loop?", never as thread -1;
#  4. a program that reads the clock gives the same steps for the same seed
#     (logical time);
#  5. more than 1,024 threads: refused, exit 3, saying why.
set -euo pipefail
racelab=$1 dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "users_shapes_check.sh: $*" >&2; exit 1; }
run() {  # run NAME ARGS...: racelab's exit status in $rc, its output in $work/NAME.out
  local name=$1
  shift
  set +e
  "$racelab" "$@" >"$work/$name.out" 2>&1
  rc=$?
  set -e
}

# 1. Pollers.
for s in pct:3 auto; do
  run "poll_$s" exec -s "$s" -n 300 --stop-at-first-failure --timeout 20 --results "$work/poll_$s.jsonl" -- "$dir/job_board"
  [ "$rc" -eq 1 ] || { cat "$work/poll_$s.out"; fail "job_board under $s: exit $rc, expected 1 (its crash found)"; }
  grep -q '"outcome":"crash"' "$work/poll_$s.jsonl" || fail "job_board under $s: no crash found"
  ! grep -q 'livelock' "$work/poll_$s.jsonl" || fail "job_board under $s: a livelock reported for pollers"
  run "fixed_$s" exec -s "$s" -n 100 --timeout 20 --results "$work/fixed_$s.jsonl" -q -- "$dir/job_board_fixed"
  [ "$rc" -eq 0 ] || { cat "$work/fixed_$s.out"; fail "job_board_fixed under $s: exit $rc, expected 0"; }
done

# 2. Deadlock messages, no -rdynamic.
run self reproduce --exec -s pct:2 -n 500 --no-minimize -o "$work/self.json" -- "$dir/self_relock_plain"
grep -q 'locks mutex cache_lock, which it already holds' "$work/self.json" ||
  fail "self-relock not named: $(grep -o '"detail": "[^"]*' "$work/self.json")"
run exited reproduce --exec -s pct:2 -n 500 --no-minimize -o "$work/exited.json" -- "$dir/exited_holder_plain"
grep -q 'mutex table_lock held by thread [0-9], which has exited' "$work/exited.json" ||
  fail "exited holder not named: $(grep -o '"detail": "[^"]*' "$work/exited.json")"
run order reproduce --exec -s pct:2 -n 500 --no-minimize -o "$work/order.json" -- "$dir/lock_order_plain"
grep -q 'lock-order cycle: thread [0-9] waits for mutex \(accounts\|audit\)' "$work/order.json" ||
  fail "lock names not read from the symbol table: $(grep -o '"detail": "[^"]*' "$work/order.json")"

# 3. A spin with nobody else to run.
run spin exec -s random -n 1 --timeout 4 --results "$work/spin.jsonl" -- "$dir/spin_forever"
grep -q 'thread 0 ran for [0-9]* ms of CPU with no scheduling point (a spin loop?)' "$work/spin.jsonl" ||
  fail "the spinning thread is not named: $(cat "$work/spin.jsonl")"
! grep -q 'thread -1' "$work/spin.jsonl" || fail "a message names thread -1"

# 4. Clock reads: the same seed gives the same steps, trial by trial.
for i in 1 2; do
  run "clock$i" exec -s random --seed 7 -n 30 --results "$work/clock$i.jsonl" -q -- "$dir/clock_check_then_act"
  grep -o '"steps":[0-9]*' "$work/clock$i.jsonl" >"$work/clock$i.steps"
done
[ -s "$work/clock1.steps" ] || fail "no steps recorded"
cmp -s "$work/clock1.steps" "$work/clock2.steps" || fail "the same seed took other steps: the clock is not logical"

# 5. Too many threads.
run many exec -s random -n 1 -- "$dir/thousand_threads"
[ "$rc" -eq 3 ] || { cat "$work/many.out"; fail "1,100 threads: exit $rc, expected 3"; }
grep -q 'more than 1024 threads' "$work/many.out" || fail "the refusal does not say why: $(cat "$work/many.out")"
echo "users_shapes_check.sh: ok"
