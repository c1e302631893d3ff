#!/bin/bash
# tsan_check.sh RACELAB PROGRAM: a program built with ThreadSanitizer reports
# its race on stderr; under racelab exec (fork server and exec per trial) every
# trial must be data_race, exit 1, with TSan's summary in the detail and the
# reports in the trial's metrics. Threads are never let go there (--let-go-ms
# 0): which schedules TSan flags is then fixed by the seed (racelab's own
# scheduling lock orders some of them for TSan). And when threads are let go
# after 1 ms of CPU time, no report may be about racelab's own code (its
# watchdog, started ahead of the trial's set-up, once showed TSan a race on the
# Scheduler).
set -u
racelab=$1 program=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "tsan_check: $*" >&2; exit 1; }

for mode in "" --no-fork-server; do
  "$racelab" exec -s random -n 2 --let-go-ms 0 $mode --results "$work/r.jsonl" -- "$program" >"$work/out" 2>&1
  rc=$?
  [ "$rc" = 1 ] || { cat "$work/out"; fail "exec $mode: exit $rc, expected 1 (a failure)"; }
  grep -q "data_race *2" "$work/out" || { cat "$work/out"; fail "exec $mode: not 2 data_race trials"; }
  python3 - "$work/r.jsonl" <<'PY' || fail "exec $mode: results file"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 2, rows
for r in rows:
    assert r["outcome"] == "data_race", r["outcome"]
    assert "data race" in r["detail"] and "tsan_race.c" in r["detail"], r["detail"]
    reports = r["metrics"]["tsan_reports"]
    assert reports and all(rep["summary"] for rep in reports), reports
PY
  rm -f "$work/r.jsonl"
done
"$racelab" exec -s random -n 5 --let-go-ms 1 --results "$work/l.jsonl" -- "$program" >"$work/out" 2>&1
[ -s "$work/l.jsonl" ] || { cat "$work/out"; fail "let go at once: no results"; }
# A report about racelab's own code has racelab's library in its top frames
# (the detail); the program's threads start in racelab's pthread_create, so
# the frames further down a report name it anyway.
if grep -o '"detail":"[^"]*' "$work/l.jsonl" | grep -q libracelab_preload; then
  grep -o '"detail":"[^"]*' "$work/l.jsonl" | head -3
  fail "let go at once: a TSan report about racelab's own library"
fi
echo "tsan_check: every trial data_race, with and without the fork server; none about racelab's own code"
