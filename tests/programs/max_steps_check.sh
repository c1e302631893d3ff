#!/usr/bin/env bash
# max_steps_check.sh RACELAB PROGRAM -- `racelab exec --max-steps N`:
#   1. a limit below what the program needs ends every trial as hang, naming the limit;
#   2. the limit is recorded with the trial: a schedule found under it replays as hang
#      (without the limit the replay would run on past it and not be a hang);
#   3. the default limit lets the same program run to its end (no hang);
#   4. a limit out of range, or --max-steps without --exec, is a usage error (exit 2).
set -euo pipefail
racelab=$1 prog=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "max_steps_check.sh: $*" >&2; exit 1; }

set +e
"$racelab" exec --max-steps 3 -s random -n 3 --timeout 20 -- "$prog" >"$work/low.out" 2>&1
rc=$?
set -e
cat "$work/low.out"
[ "$rc" -eq 1 ] || fail "--max-steps 3: exit $rc, expected 1"
grep -q "step limit 3 reached" "$work/low.out" || fail "--max-steps 3: the hang does not name the limit"
grep -q "hang  *3" "$work/low.out" || fail "--max-steps 3: not every trial ended as hang"

set +e
"$racelab" reproduce --exec --max-steps 3 -s random -n 5 --timeout 20 -o "$work/s.json" -- "$prog" >"$work/rep.out" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || { cat "$work/rep.out"; fail "reproduce --max-steps 3: exit $rc, expected 1"; }
grep -q '"max_steps": 3' "$work/s.json" || fail "the schedule does not record max_steps 3"
"$racelab" replay -n 3 "$work/s.json" | tee "$work/replay.out"
grep -q "3/3 reproduced hang" "$work/replay.out" || fail "the schedule did not replay as hang under its own limit"

set +e
"$racelab" exec -s random -n 3 --timeout 20 -q -- "$prog" >"$work/default.out" 2>&1
set -e
if grep -q "step limit" "$work/default.out"; then cat "$work/default.out"; fail "the default limit stopped the program"; fi

for bad in "exec --max-steps 0 -- $prog" "exec --max-steps 10000001 -- $prog" "run direct_leak --max-steps 5"; do
  set +e
  # shellcheck disable=SC2086
  "$racelab" $bad >"$work/bad.out" 2>&1
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || { cat "$work/bad.out"; fail "racelab $bad: exit $rc, expected 2"; }
done
echo "max_steps_check.sh: ok"
