#!/usr/bin/env bash
# finds_check.sh RACELAB PROGRAM CLASS BUDGET STRATEGY... -- each strategy finds
# the program's bug as CLASS within BUDGET trials (exit 1), and dpor never
# calls its search complete without having found it.
set -euo pipefail
racelab=$1 program=$2 class=$3 budget=$4
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for strategy in "$@"; do
  rc=0
  "$racelab" exec -s "$strategy" -n "$budget" --timeout 20 --let-go-ms 2000 -q -- "$program" >"$work/out" 2>&1 || rc=$?
  cat "$work/out"
  [ "$rc" -eq 1 ] || { echo "finds_check.sh: $(basename "$program") under $strategy: exit $rc, expected 1 (found)" >&2; exit 1; }
  grep -Eq "^  $class +[1-9]" "$work/out" ||
    { echo "finds_check.sh: $(basename "$program") under $strategy: no $class trial" >&2; exit 1; }
done
echo "finds_check.sh: $(basename "$program"): ok"
