#!/usr/bin/env bash
# A script trial's class does not depend on the machine's load: with 4 busy
# processes on the machine, a thread spinning with no point is still let go by
# its own CPU time (never wall time), so the correct spin script holds, and a
# deadlocking schedule of lock_order.py still replays as the same hang.
#
#   pyrun_under_load.sh RACELAB WORKDIR      (from the source tree)
set -uo pipefail
racelab=$1 work=$2
scripts=tests/pytorch/scripts
mkdir -p "$work"
# The schedule, found on the machine as it is.
"$racelab" reproduce --pyrun -s random -n 30 --seed 1 --no-minimize --timeout 240 \
  -o "$work/lock_order.load.json" -- $scripts/lock_order.py >/dev/null 2>&1
[[ -f "$work/lock_order.load.json" ]] || { echo "pyrun_under_load: no deadlock found to replay"; exit 1; }
busy=()
for _ in 1 2 3 4; do
  bash -c 'while :; do :; done' &
  busy+=($!)
done
cleanup() { for p in "${busy[@]}"; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT
spin=$("$racelab" pyrun -n 5 --seed 1 --let-go-cpu-ms 100 --timeout 240 -- $scripts/wait_spin.py 2>&1)
replay=$("$racelab" replay "$work/lock_order.load.json" -n 3 --timeout 240 2>&1)
printf '%s\n%s\n' "$spin" "$replay"
grep -qF "failure rate     0.0000 (0/5)" <<<"$spin" || { echo "pyrun_under_load: the spin script did not hold under load"; exit 1; }
grep -qF "3/3 reproduced hang" <<<"$replay" || { echo "pyrun_under_load: the deadlock did not replay as a hang under load"; exit 1; }
echo "pyrun_under_load: same classes under 4 busy processes"
