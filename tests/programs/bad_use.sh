#!/usr/bin/env bash
# bad_use.sh RACELAB STATIC_PROGRAM EXITS_BEFORE_MAIN -- racelab exec refuses
# what it cannot run with a clear message and exit 3, and leaves nothing behind.
set -uo pipefail
racelab=$1 static_program=$2 before_main=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
status=0
expect3() {  # expect3 "WHAT THE MESSAGE SAYS" ARGS...
  local says=$1
  shift
  "$racelab" "$@" >out.txt 2>&1
  local rc=$?
  if [ "$rc" -ne 3 ] || ! grep -q "$says" out.txt; then
    echo "bad_use.sh: racelab $*: exit $rc (expected 3), output:" >&2
    cat out.txt >&2
    status=1
  fi
  rm -f out.txt
}
expect3 "not found" exec -n 1 -- no-such-program-racelab
expect3 "no such file" exec -n 1 -- ./no/such/file
expect3 "statically linked" exec -n 1 -- "$static_program"
printf '#!/bin/sh\necho hi\n' >script.sh && chmod +x script.sh
expect3 "not an ELF executable but a script" exec -n 1 -- ./script.sh
# The hint names the script's own interpreter, from its #! line.
expect3 "racelab exec -- /bin/sh $work/script.sh" exec -n 1 -- ./script.sh
printf '#!/usr/bin/env -S bash -e\necho hi\n' >script.sh
expect3 "racelab exec -- bash $work/script.sh" exec -n 1 -- ./script.sh
rm -f script.sh
expect3 "never reached main" exec -n 1 -- "$before_main"
expect3 "never reached main" exec --no-fork-server -n 1 -- "$before_main"
expect3 "never reached main" reproduce --exec -n 1 -- "$before_main"
left=$(ls -A)
if [ -n "$left" ]; then
  echo "bad_use.sh: files left behind: $left" >&2
  status=1
fi
[ "$status" -eq 0 ] && echo "bad_use.sh: ok"
exit $status
