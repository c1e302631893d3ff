#!/usr/bin/env bash
# multiprocessing under pyrun holds as natively, and leaves no process behind.
#
#   multiprocessing_holds.sh RACELAB TRIALS STRATEGY... -- SCRIPT...   (scripts relative to the repository root)
#
# Each script (written as users write them: a spawn or fork pool, a producer
# process and a queue, a ProcessPoolExecutor, beside threads around
# torch.compile) first runs natively and must exit 0; then under
# `racelab pyrun -n TRIALS -s STRATEGY` it must hold in every trial. Each
# racelab run gets a session of its own (setsid): once racelab has exited,
# no process of that session may be left (a pool worker, a producer, a
# forked child orphaned by the trial). The Python is found as torch_check.sh
# finds it (exit 77, skipped, without one).
set -uo pipefail
racelab=$1 trials=$2
shift 2
strategies=()
while [[ $# -gt 0 && $1 != "--" ]]; do strategies+=("$1"); shift; done
shift
here=$(cd "$(dirname "$0")" && pwd)
# Scripts are given relative to the repository root and run from there: the torch root's
# Python sees the repository as its working directory (ci/in-torch-root), not by its path here.
cd "$here/../.."
check="$here/torch_check.sh"
failed=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for script in "$@"; do
  name=$(basename "$script" .py)
  # Natively first: `python3 script.py`, in the same Python the trials use.
  if ! bash "$check" 0 "" -- bash -c 'eval "$RACELAB_PYTHON" \"\$0\"' "$script" >"$work/native.log" 2>&1; then
    if grep -q "^skipped:" "$work/native.log"; then cat "$work/native.log"; exit 77; fi
    echo "FAIL $name: natively it does not exit 0:"; cat "$work/native.log"; failed=1; continue
  fi
  echo "ok   $name natively"
  for s in "${strategies[@]}"; do
    sidfile="$work/sid"
    setsid bash -c 'echo $$ >"$1"; shift; exec bash "$@"' racelab-session "$sidfile" "$check" 0 "failure rate     0.0000 (0/$trials)" -- \
      "$racelab" pyrun -n "$trials" -s "$s" --seed 1 --timeout 240 -- "$script" >"$work/run.log" 2>&1
    rc=$?
    sid=$(cat "$sidfile")
    # A process on its way out (a resource tracker that saw its pipe close, on a loaded
    # machine) is gone within seconds; one left behind is not.
    for _ in $(seq 100); do
      left=$(pgrep -a -s "$sid" || true)
      [[ -z $left ]] && break
      sleep 0.1
    done
    if [[ $rc -ne 0 ]]; then
      echo "FAIL $name under $s:"; tail -40 "$work/run.log"; failed=1
    else
      echo "ok   $name under $s: $(grep -o 'failure rate.*' "$work/run.log")"
    fi
    if [[ -n "$left" ]]; then
      echo "FAIL $name under $s: processes left behind after racelab exited:"; echo "$left"
      pkill -KILL -s "$sid" || true
      failed=1
    fi
  done
done
exit $failed
