#!/bin/bash
# tests/programs/lean_commands.sh RACELAB BUGGY_PROGRAM SOURCE_DIR
#
# The commands that need no LibTorch run in the lean racelab itself and never
# hand over to racelab-torch (cli/torch_part.h): with RACELAB_TORCH_PART
# naming a file that does not exist, a hand-over would fail with exit 70 and
# "cannot start the LibTorch part". Each must instead give its own answer:
# version, exec, reproduce/replay/minimize of an exec schedule, validate of
# scenarios whose workloads need no LibTorch, ci and merge of one (the
# hard-bug catalogue), explain, and pyrun without a Python. And a command that
# does need LibTorch (run direct_leak) does hand over: exit 70, saying so.
set -uo pipefail
racelab=$1 buggy=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export RACELAB_TORCH_PART="$work/no-such-racelab-torch"
fail() { echo "lean_commands: $*" >&2; cat "$work/out" >&2; exit 1; }
expect() {  # expect RC COMMAND...: runs it, its output in $work/out
  local want=$1 got=0
  shift
  "$@" >"$work/out" 2>&1 || got=$?
  if grep -q "cannot start the LibTorch part" "$work/out"; then fail "handed over to the LibTorch part: $*"; fi
  [ "$got" -eq "$want" ] || fail "exit $got, expected $want: $*"
}

expect 0 "$racelab" version
expect 0 "$racelab" exec -n 1 -- /bin/true
expect 1 "$racelab" reproduce --exec -s pct:2 -n 2000 --timeout 20 --let-go-ms 2000 -o "$work/s.json" -- "$buggy"
expect 0 "$racelab" replay "$work/s.min.json"
expect 0 "$racelab" minimize "$work/s.json" -o "$work/m.json"
expect 0 "$racelab" validate "$src/scenarios/pytorch" "$src/scenarios/search/hard_depth3.json"
expect 0 "$racelab" ci "$src/scenarios/search/hard_depth3.json" --budget-scale 0.1 --jobs 1 --no-progress --shard 1/1 \
  --out "$work/ci"
expect 0 "$racelab" merge "$work"/ci/results*.jsonl --out "$work/merged"
expect 0 "$racelab" explain "Detected that you are using FX to symbolically trace a dynamo-optimized function"
RACELAB_PYTHON= expect 2 "$racelab" pyrun -- "$work/script.py"
grep -q -- "--python" "$work/out" || fail "pyrun without a Python does not ask for --python"

# A LibTorch workload is handed over: here to a part that is not there.
got=0
"$racelab" run direct_leak -n 1 >"$work/out" 2>&1 || got=$?
[ "$got" -eq 70 ] || fail "run direct_leak: exit $got, expected 70 (no LibTorch part to hand over to)"
grep -q "cannot start the LibTorch part $RACELAB_TORCH_PART" "$work/out" || fail "run direct_leak: no hand-over"
echo "lean_commands: ok"
