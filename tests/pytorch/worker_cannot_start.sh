#!/usr/bin/env bash
# A worker that cannot start is bad input (exit 3) from every command, in the
# worker's own words, with no trial line and no replay line -- never a `crash`
# of the user's script. Needs no torch: each worker fails before it imports it.
#
#   worker_cannot_start.sh RACELAB SCRIPT WORKDIR
set -uo pipefail
racelab=$1 script=$2 work=$3
mkdir -p "$work"
fails=0

# expect NAME TEXT -- COMMAND...: exit 3, TEXT in the output, no trial or replay line.
expect() {
  local name=$1 text=$2
  shift 3
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [[ $rc -ne 3 ]] || ! grep -qF -- "$text" <<<"$out" || grep -qE 'racelab replay|^  (crash|error|hang) ' <<<"$out"; then
    echo "FAIL $name: exit $rc (expected 3), expected '$text', and no trial or replay line; output:"
    printf '%s\n' "$out" | tail -15
    fails=$((fails + 1))
  else
    echo "ok   $name"
  fi
}

# 1. An interpreter that is not there.
expect pyrun_missing_python "its command could not be run" -- \
  "$racelab" pyrun --python /nonexistent/py -n 3 -- "$script"
expect run_missing_python "its command could not be run" -- \
  "$racelab" run torch_direct_leak --python /nonexistent/py -n 3

# 2. One that cannot load racelab's host library (not a shared object: as another architecture's).
printf 'not a shared object\n' >"$work/libracelab_host.so"
expect pyrun_bad_host_library "cannot load racelab's host library" -- \
  env RACELAB_HOST_LIB="$work/libracelab_host.so" "$racelab" pyrun --python python3 -n 3 -- "$script"

# 3. An import error in racelab's package.
mkdir -p "$work/broken/racelab"
printf '' >"$work/broken/racelab/__init__.py"
printf 'import racelab_no_such_module_anywhere\n' >"$work/broken/racelab/worker.py"
expect pyrun_broken_package "ModuleNotFoundError" -- \
  env RACELAB_PYTHON_DIR="$work/broken" "$racelab" pyrun --python python3 -n 3 -- "$script"

# 4. A campaign: the same, as exit 3 (a pyrun scenario).
expect ci_missing_python "/nonexistent/py" -- \
  "$racelab" ci "$(dirname "$script")/join_timeout.json" --python /nonexistent/py --budget-scale 0.02 --no-progress \
  --out "$work/ci"

echo "worker_cannot_start: $fails failed"
exit $((fails > 0))
