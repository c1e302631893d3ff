#!/usr/bin/env bash
# load_check.sh RACELAB PROGRAM -- a loaded machine changes no outcome: 200
# random trials of a race-free PROGRAM, run beside 3 busy processes (on a
# 2-core machine: load 4 and more) with the let-go at 1 ms, must all hold.
# The let-go and the watchdog judge a thread by its own CPU time and whether
# it sleeps in the kernel, so a thread the machine keeps waiting for a core is
# never let go, and no trial ends as a hang the program does not have. (With
# a wall-clock let-go, 13 of 20 such trials were hangs.)
set -euo pipefail
racelab=$1 program=$2
work=$(mktemp -d)
busy=()
cleanup() {
  for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
for _ in 1 2 3; do
  bash -c 'while :; do :; done' &
  busy+=($!)
done
set +e
"$racelab" exec -s random -n 200 --let-go-ms 1 --timeout 20 --results "$work/r.jsonl" -q -- "$program" \
  >"$work/out" 2>&1
rc=$?
set -e
cat "$work/out"
hangs=$(grep -c '"outcome":"hang"' "$work/r.jsonl" || true)
trials=$(grep -c '"trial":' "$work/r.jsonl" || true)
echo "load_check.sh: $trials trials beside 3 busy processes: $hangs hang(s)"
[ "$rc" -eq 0 ] || { echo "load_check.sh: racelab exited $rc, expected 0 (every trial holds)" >&2; exit 1; }
[ "$trials" -eq 200 ] || { echo "load_check.sh: $trials trials recorded, expected 200" >&2; exit 1; }
[ "$hangs" -eq 0 ] || { echo "load_check.sh: $hangs false hang(s) under load" >&2; exit 1; }
echo "load_check.sh: ok"
