#!/usr/bin/env bash
# op_points_check.sh RACELAB PROGRAM OP_POINTS_PRELOAD -- op-level points in an
# unmodified LibTorch program under racelab exec (PROGRAM: tensor_lost_update,
# two threads racing item() then fill_() on one tensor, no lock):
#   1. without op points there is no scheduling point between the two ops:
#      the program holds under pct:2;
#   2. with the op points library preloaded beside racelab's (--env
#      LD_PRELOAD=...) and RACELAB_OP_POINTS=aten::fill_, racelab reproduce
#      finds the lost update (error) and minimises it;
#   3. the minimised schedule replays 10/10 (it records the environment);
#   4. the same schedule without the op points is a divergence, not a pass.
set -euo pipefail
racelab=$1 program=$2 op_points=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "op_points_check.sh: $*" >&2; exit 1; }

"$racelab" exec -s pct:2 -n 60 --let-go-ms 2000 --timeout 30 -q -- "$program" | tee "$work/plain.out" ||
  fail "without op points the program should hold (no point between item and fill_)"

set +e
"$racelab" reproduce --exec -s pct:2 -n 500 --let-go-ms 2000 --timeout 30 --env "LD_PRELOAD=$op_points" \
  --env RACELAB_OP_POINTS=aten::fill_ -o "$work/s.json" -- "$program" >"$work/reproduce.out" 2>&1
rc=$?
set -e
cat "$work/reproduce.out"
[ "$rc" -eq 1 ] || fail "reproduce with op points exited $rc, expected 1 (found)"
grep -q '"class": "error"' "$work/s.min.json" || fail "the minimised schedule is not error"
grep -q 'aten::fill_' "$work/s.min.json" || fail "the schedule does not switch at aten::fill_"

"$racelab" replay -n 10 "$work/s.min.json" | tee "$work/replay.out"
grep -q "10/10 reproduced error" "$work/replay.out" || fail "the minimised schedule did not replay 10/10"
python3 - "$work/s.min.json" "$work/no_points.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
def drop(o):
    if isinstance(o, dict):
        if "env" in o and isinstance(o["env"], dict): o["env"] = {}
        for v in o.values(): drop(v)
    elif isinstance(o, list):
        for v in o: drop(v)
drop(s)
json.dump(s, open(sys.argv[2], "w"))
PY
set +e
"$racelab" replay "$work/no_points.json" >"$work/no_points.out" 2>&1
rc=$?
set -e
cat "$work/no_points.out"
[ "$rc" -eq 4 ] || fail "the schedule replayed without op points: exit $rc, expected 4 (divergence)"
echo "op_points_check.sh: ok"
