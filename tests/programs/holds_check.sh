#!/usr/bin/env bash
# holds_check.sh RACELAB PROGRAM [EXEC FLAGS...] -- a correct program holds in
# 50 of 50 trials under `auto` and under `pct:3` (issue 38: programs that wait
# for a cancel, a timer or a C11 condition variable were reported failing).
# These programs have no uncontrolled waits, so a let-go could only come from
# a loaded machine descheduling a thread: --let-go-ms 2000 keeps it out.
set -euo pipefail
racelab=$1 program=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for strategy in auto pct:3; do
  rc=0
  "$racelab" exec -s "$strategy" -n 50 --timeout 20 --let-go-ms 2000 "$@" -- "$program" >"$work/out" 2>&1 || rc=$?
  cat "$work/out"
  [ "$rc" -eq 0 ] || { echo "holds_check.sh: $(basename "$program") under $strategy: exit $rc, expected 0" >&2; exit 1; }
  grep -Eq "^  holds +50$" "$work/out" ||
    { echo "holds_check.sh: $(basename "$program") under $strategy: not 50 of 50 trials hold" >&2; exit 1; }
done
echo "holds_check.sh: $(basename "$program"): ok"
