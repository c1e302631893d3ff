#!/usr/bin/env bash
# hostile_input.sh RACELAB BUGGY FIXED -- a schedule replays only against the
# program it was made for (engine/schedule_fit.h), on every path that replays:
#   1. `racelab exec -s replay:FILE -- OTHER` is refused (exit 3) before any
#      trial, as `racelab replay` refuses it; before, every trial was a
#      divergence counted as a failure (exit 1) with a new racelab1: line;
#   2. a schedule file or racelab1: string with no program_id is refused by
#      replay, exec -s replay: and minimize (exit 3, naming --any-program);
#      with --any-program it replays and says so in a warning;
#   3. a program whose output is not UTF-8 (BAD_OUTPUT prints such bytes and
#      exits 1) is `error` with its schedule saved; before, the worker died
#      encoding the output and every trial was a `crash`;
#   4. --fail-on-output: a pattern nested thousands deep is a bad flag (exit
#      2), and matching along a 200,000-character line (LONG_LINE) holds;
#      before, std::regex ran out of stack: racelab, or the worker (`crash`).
set -euo pipefail
racelab=$1 buggy=$2 fixed=$3 bad_output=$4 long_line=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "hostile_input.sh: $*" >&2; exit 1; }
# run NAME EXPECTED_RC ARGS...: racelab ARGS, output in $work/NAME.out.
run() {
  local name=$1 want=$2 rc=0
  shift 2
  "$racelab" "$@" >"$work/$name.out" 2>&1 || rc=$?
  [ "$rc" -eq "$want" ] || { cat "$work/$name.out" >&2; fail "racelab $*: exit $rc, expected $want"; }
}
says() { grep -qF -- "$2" "$work/$1.out" || { cat "$work/$1.out" >&2; fail "$1: the output does not say: $2"; }; }
never() { ! grep -qF -- "$2" "$work/$1.out" || { cat "$work/$1.out" >&2; fail "$1: the output says: $2"; }; }

# A failing schedule of the buggy program (no let-go: nothing here waits uncontrolled).
run reproduce 1 reproduce --exec -s pct:2 -n 2000 --timeout 20 --let-go-ms 2000 --no-minimize -o "$work/s.json" -- "$buggy"
grep -q '"program_id": "[0-9]*:[0-9a-f]*"' "$work/s.json" || fail "the schedule records no program_id"

# 1. exec -s replay: against another program.
run other 3 exec -s "replay:$work/s.json" -n 3 --timeout 20 --let-go-ms 2000 -- "$fixed"
says other "not the program this was made for"
never other "racelab1:"
never other "failure rate"
# ... and against its own program it replays, every trial the recorded class.
run own 1 exec -s "replay:$work/s.json" -n 3 --timeout 20 --let-go-ms 2000 -- "$buggy"
says own "failure rate     1.0000 (3/3)"

# 2. No program identity: a file, and the racelab1: string of the same schedule.
compact=$(python3 - "$work/s.json" "$work/noid.json" <<'PY'
import base64, json, sys
s = json.load(open(sys.argv[1]))
del s["knobs"]["program_id"]
json.dump(s, open(sys.argv[2], "w"), indent=1)
runs = []
for d in s["decisions"]:
    if runs and runs[-1][0] == d["thread"]: runs[-1][1] += 1
    else: runs.append([d["thread"], 1])
rle = ".".join(f"{t}*{n}" if n > 1 else str(t) for t, n in runs)
a = [1, s["workload"], s["mitigation"], s["threads"], s["seed"], s["outcome"]["class"], s["knobs"], s["scenario"], rle]
print("racelab1:" + base64.urlsafe_b64encode(json.dumps(a).encode()).decode().rstrip("="))
PY
)
for what in "$work/noid.json" "$compact"; do
  run noid_replay 3 replay "$what"
  says noid_replay "records no program identity (program_id)"
  says noid_replay "--any-program"
  run noid_exec 3 exec -s "replay:$what" -n 2 --timeout 20 -- "$buggy"
  says noid_exec "records no program identity (program_id)"
  never noid_exec "failure rate"
  run noid_minimize 3 minimize "$what" -o "$work/m.json"
  says noid_minimize "records no program identity (program_id)"
  run noid_any 0 replay --any-program -n 3 "$what"
  says noid_any "racelab: warning:"
  says noid_any "3/3 reproduced"
done
run noid_any_exec 1 exec --any-program -s "replay:$work/noid.json" -n 2 --timeout 20 --let-go-ms 2000 -- "$buggy"
says noid_any_exec "racelab: warning:"
says noid_any_exec "failure rate     1.0000 (2/2)"

# 3. Output that is not UTF-8.
run bad_output 1 exec -n 3 --timeout 20 --schedule-dir "$work/bad" -- "$bad_output"
says bad_output "error            3"
says bad_output "not text"
never bad_output "crash"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work"/bad/*error.json || fail "the schedule of a non-UTF-8 failure is not JSON"

# 4. std::regex's recursion.
deep=$(python3 -c "print('(' * 30000 + 'a' + ')' * 30000)")
run deep 2 exec -n 1 --fail-on-output "$deep" -- "$long_line"
says deep "expected a regular expression of at most 1024 characters"
run nested 2 exec -n 1 --fail-on-output "$(python3 -c "print('(' * 40 + 'a' + ')' * 40)")" -- "$long_line"
says nested "groups nested at most 32 deep"
run long 0 exec -n 2 --timeout 20 --fail-on-output '(a|b)*c' -- "$long_line"
says long "holds            2"
echo "hostile_input.sh: ok"
