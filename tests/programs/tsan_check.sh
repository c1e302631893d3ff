#!/bin/bash
# tsan_check.sh RACELAB RACY CLEAN: programs built with ThreadSanitizer, under
# racelab exec (fork server and exec per trial). TSan judges a race by the
# happens-before of the program's own synchronisation; racelab's scheduling
# (its lock, its hand-offs, its barrier in place of the C library's) must
# neither hide a race nor invent one (preload/control.h, UnseenByTsan):
#  - RACY (two threads add to a plain counter) is data_race in every trial,
#    for every seed, with TSan's summary in the detail and the reports in the
#    metrics. Before racelab hid its own order from TSan, a seed's trials
#    came out data_race or holds depending on how the threads' wake-ups fell.
#  - CLEAN (a mutex, a barrier, a semaphore, a condition variable) holds in
#    every trial, under random and PCT.
#  - With threads let go after 1 ms of CPU (RACY's loops spin for longer, so
#    let-go happens, and the test checks that it did), no report is about
#    racelab's own code: the watchdog and the threads let go touch the
#    Scheduler with nothing TSan can see ordering them.
set -u
racelab=$1 racy=$2 clean=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "tsan_check: $*" >&2; exit 1; }

for mode in "" --no-fork-server; do
  for seed in 1 2 3; do
    "$racelab" exec -s random -n 3 --seed $seed --let-go-ms 0 $mode --results "$work/r.jsonl" -- "$racy" \
      >"$work/out" 2>&1
    rc=$?
    [ "$rc" = 1 ] || { cat "$work/out"; fail "racy $mode seed $seed: exit $rc, expected 1 (a failure)"; }
    python3 - "$work/r.jsonl" <<'PY' || { cat "$work/out"; fail "racy $mode seed $seed: results file"; }
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
rows = [r for r in rows if "outcome" in r]
assert len(rows) == 3, rows
for r in rows:
    assert r["outcome"] == "data_race", (r["outcome"], r.get("detail"))
    assert "data race" in r["detail"] and "tsan_race.c" in r["detail"], r["detail"]
    reports = r["metrics"]["tsan_reports"]
    assert reports and all(rep["summary"] for rep in reports), reports
PY
    rm -f "$work/r.jsonl"
  done
done

for strategy in random pct:2; do
  "$racelab" exec -s $strategy -n 8 --let-go-ms 0 -- "$clean" >"$work/out" 2>&1
  rc=$?
  [ "$rc" = 0 ] || { cat "$work/out"; fail "clean, $strategy: exit $rc, expected 0 (holds in every trial)"; }
  grep -q "holds *8" "$work/out" || { cat "$work/out"; fail "clean, $strategy: not 8 trials that hold"; }
done

"$racelab" exec -s random -n 4 --let-go-ms 1 --results "$work/l.jsonl" --schedule-dir "$work/schedules" \
  -- "$racy" >"$work/out" 2>&1
[ -s "$work/l.jsonl" ] || { cat "$work/out"; fail "let go at once: no results"; }
grep -q '"kind": *"let_go"' "$work"/schedules/*.json ||
  { cat "$work/out"; fail "let go at once: no thread was let go (the check below would check nothing)"; }
# A report about racelab's own code has racelab's library in its top frames
# (the detail); the program's threads start in racelab's pthread_create, so
# the frames further down a report name it anyway.
if grep -o '"detail":"[^"]*' "$work/l.jsonl" | grep -q libracelab_preload; then
  grep -o '"detail":"[^"]*' "$work/l.jsonl" | head -3
  fail "let go at once: a TSan report about racelab's own library"
fi
echo "tsan_check: racy is data_race in every trial, clean holds in every trial, and no report is about racelab"
