#!/usr/bin/env bash
# scenario_check.sh RACELAB SCENARIO -- a scenario over a program and its fix
# (workload "exec", scenarios/SCHEMA.md), run as a person would:
#   1. `racelab ci SCENARIO` passes (the buggy build reproduces, the fixed one
#      holds) and the report names both variants;
#   2. the schedule it saved for the buggy build replays with the same class;
#   3. bad exec scenarios are refused with exit 3, each problem naming the
#      file, the field and what was expected, and nothing is run.
# SCENARIO lies next to its programs (lost_update, lost_update_fixed).
set -euo pipefail
racelab=$1 scenario=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "scenario_check.sh: $*" >&2; exit 1; }

"$racelab" ci "$scenario" --out "$work/ci" --jobs 1 --no-progress | tee "$work/ci.out" || fail "racelab ci did not pass"
grep -q "program_lost_update" "$work/ci/report.md" || fail "the report does not name the scenario"
grep -q "fixed" "$work/ci/report.md" || fail "the report does not name the fixed variant"
schedule=$(find "$work/ci/schedules" -name '*-none-pct_2-*-error.json' | head -1)
[ -n "$schedule" ] || fail "no schedule saved for the buggy build"
grep -q '"program_id": "[0-9]*:[0-9a-f]*"' "$schedule" || fail "the schedule does not record the program it ran"
"$racelab" replay -n 10 "$schedule" | tee "$work/replay.out"
grep -q "10/10 reproduced error" "$work/replay.out" || fail "the saved schedule did not replay as error 10/10"

# Bad scenarios (in $work, naming the programs by absolute path): a command for
# a mitigation not listed, an unknown key, a bad regular expression -- all
# reported at once, exit 3, nothing run.
dir=$(cd "$(dirname "$scenario")" && pwd)
sed -e "s|\"\./|\"$dir/|g" -e 's|"let_go_ms"|"let_go"|' \
    -e 's|"commands": {|"fail_on_output": "(", "commands": {"fixd": ["/bin/true"], |' \
    "$scenario" >"$work/bad.json"
set +e
"$racelab" ci "$work/bad.json" --out "$work/bad" --jobs 1 --no-progress >"$work/bad.out" 2>&1
rc=$?
set -e
cat "$work/bad.out"
[ "$rc" -eq 3 ] || fail "a bad exec scenario: exit $rc, expected 3"
[ ! -e "$work/bad/results.jsonl" ] || fail "a bad exec scenario ran trials"
grep -q 'bad.json: \$.exec.let_go: found unknown key' "$work/bad.out" || fail "no problem for the unknown key"
grep -q '\$.exec.commands.fixd: .*expected a mitigation listed in \$.mitigations' "$work/bad.out" ||
  fail "no problem for the command of an unlisted mitigation"
grep -q '\$.exec.fail_on_output: found "(", expected a regular expression' "$work/bad.out" || fail "no problem for the regex"

# Structure sound, a program missing: named with its command and why.
sed -e "s|\"\./|\"$dir/|g" -e 's|lost_update_fixed"|no_such_program"|' "$scenario" >"$work/missing.json"
set +e
"$racelab" validate "$work/missing.json" >"$work/missing.out" 2>&1
rc=$?
set -e
cat "$work/missing.out"
[ "$rc" -eq 3 ] || fail "a missing program: exit $rc, expected 3"
grep -q 'missing.json: \$.exec.commands.fixed: found \[".*/no_such_program"\], expected a program that runs here (program .*no_such_program: no such file)' \
  "$work/missing.out" || fail "the missing program's problem does not say which and why"
echo "scenario_check.sh: ok"
