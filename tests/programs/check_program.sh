#!/usr/bin/env bash
# check_program.sh RACELAB BUGGY FIXED CLASS [STRATEGY [REPLAYS]] -- what tests/programs promise of
# one buggy program and its fix, run as a person would:
#   1. `racelab reproduce --exec -s STRATEGY` (default pct:2) finds the bug as
#      CLASS (exit 1) and minimises it;
#   2. `racelab replay` of the minimised schedule gives CLASS every time
#      (REPLAYS/REPLAYS, 100 by default);
#   3. `racelab exec` of the fixed program holds over its budget (exit 0);
#   4. the schedule replayed against the fixed program is refused (exit 3):
#      it was made for another program.
# These programs have no uncontrolled waits, so a let-go could only come from
# a loaded machine descheduling a thread: --let-go-ms 2000 keeps it out.
set -euo pipefail
racelab=$1 buggy=$2 fixed=$3 class=$4 strategy=${5:-pct:2} replays=${6:-100}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check_program.sh: $(basename "$buggy"): $*" >&2; exit 1; }

set +e
"$racelab" reproduce --exec -s "$strategy" -n 2000 --timeout 20 --let-go-ms 2000 -o "$work/s.json" -- "$buggy" >"$work/reproduce.out" 2>&1
rc=$?
set -e
cat "$work/reproduce.out"
[ "$rc" -eq 1 ] || fail "reproduce exited $rc, expected 1 (found)"
grep -q "\"class\": \"$class\"" "$work/s.min.json" || fail "minimised schedule is not $class: $(grep -o '"class": "[a-z_]*"' "$work/s.min.json")"

"$racelab" replay -n "$replays" "$work/s.min.json" | tee "$work/replay.out"
grep -q "$replays/$replays reproduced $class" "$work/replay.out" || fail "replay did not give $class $replays times out of $replays"

"$racelab" exec -s random -n 100 --timeout 20 -q -- "$fixed" | tee "$work/fixed.out" || fail "the fixed program did not hold"

# The fixed program is not the one the schedule was made for.
cp "$fixed" "$work/impostor"
sed -e "s|$buggy|$work/impostor|" "$work/s.min.json" >"$work/other.json"
set +e
"$racelab" replay "$work/other.json" >"$work/other.out" 2>&1
rc=$?
set -e
cat "$work/other.out"
[ "$rc" -eq 3 ] || fail "a schedule made for another program: exit $rc, expected 3"
grep -q "not the program this was made for" "$work/other.out" || fail "the refusal does not say why"
echo "check_program.sh: $(basename "$buggy"): ok"
