#!/usr/bin/env bash
# memory_points_check.sh RACELAB RACELAB_CC RACELAB_CXX SOURCE_DIR -- the
# compiler wrappers build programs with memory-access points, as a person
# would build their own (docs/USING.md, "Memory-access points"):
#   1. racelab-cc builds plain_race.c without libtsan, and `racelab exec`
#      finds its lost update (exit 1);
#   2. racelab-c++ builds atomic_counter.cpp: run natively, its atomics count
#      right on two threads (the runtime performs them atomically); under
#      `racelab exec` it holds, its atomics are points and its stack and
#      thread-local accesses are not (fewer than 4 steps per iteration, where
#      6 would mean they were not filtered);
#   3. where clang is installed, racelab-cc with RACELAB_CC=clang builds
#      plain_race the same, and racelab exec finds its lost update.
set -euo pipefail
racelab=$1 cc=$2 cxx=$3 src=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "memory_points_check.sh: $*" >&2; exit 1; }

"$cc" -O1 -pthread "$src/plain_race.c" -o "$work/plain_race"
if ldd "$work/plain_race" | grep -q tsan; then fail "racelab-cc linked libtsan: $(ldd "$work/plain_race")"; fi
set +e
"$racelab" exec -s pct:2 -n 2000 --let-go-ms 2000 --timeout 20 --stop-at-first-failure -q -- "$work/plain_race"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "racelab exec of racelab-cc's plain_race exited $rc, expected 1 (the lost update found)"

# Compiling and linking apart, as build systems do.
"$cxx" -O1 -c "$src/atomic_counter.cpp" -o "$work/atomic_counter.o"
"$cxx" -pthread "$work/atomic_counter.o" -o "$work/atomic_counter"
"$work/atomic_counter" 2000000 || fail "atomic_counter run natively lost a count"
n=2000
"$racelab" exec -s random -n 3 --timeout 60 --results "$work/r.jsonl" -q -- "$work/atomic_counter" $n \
  || fail "atomic_counter did not hold under racelab exec"
max_steps=$(grep -o '"steps": *[0-9]*' "$work/r.jsonl" | grep -o '[0-9]*$' | sort -n | tail -1)
echo "atomic_counter $n: at most $max_steps steps per trial"
[ "$max_steps" -ge $((2 * 2 * n)) ] || fail "$max_steps steps: the atomics were not all points"
[ "$max_steps" -lt $((2 * 4 * n)) ] || fail "$max_steps steps: stack or thread-local accesses became points"
if command -v clang >/dev/null; then
  RACELAB_CC=clang "$cc" -O1 -pthread "$src/plain_race.c" -o "$work/plain_race_clang"
  set +e
  "$racelab" exec -s pct:2 -n 2000 --let-go-ms 2000 --timeout 20 --stop-at-first-failure -q -- "$work/plain_race_clang"
  rc=$?
  set -e
  [ "$rc" -eq 1 ] || fail "racelab exec of clang's plain_race exited $rc, expected 1"
else
  echo "memory_points_check.sh: no clang here: its build not checked"
fi
echo "memory_points_check.sh: ok"
