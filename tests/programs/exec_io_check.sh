#!/usr/bin/env bash
# exec_io_check.sh RACELAB BIN_DIR -- what issue 38's probe found about a
# program's inputs and racelab's own verdicts under `racelab exec`:
#   1. --stdin FILE: every trial reads FILE from its start (reads_stdin holds
#      in all 20 trials, the fork server's included); without it stdin is
#      /dev/null (end-of-file: exit status 2, `error`); a missing file or a
#      folder is bad input (exit 3, naming --stdin);
#   2. asynchronous cancellation is refused as bad input (exit 3), saying so;
#   3. --real-time means the real time: alarm_wait's real alarm(1) fires while
#      its sleeps take their real time;
#   4. a program that waits with the futex system call (unseen_futex), or
#      spins on an atomic until it is let go (spin_wait): dpor warns that it
#      synchronised outside racelab's control, naming what, and does not call
#      its search complete;
#   5. a C11 program's calls are all seen: dpor:2 over the fixed lost update
#      completes, with more than one class and no warning;
#   6. a replay whose point name is 8 MB long (over the preload's report page)
#      is a divergence (exit 4) under `replay` and `exec -s replay:`; before,
#      the report was dropped and the trial judged `holds` by its exit status.
set -euo pipefail
racelab=$1 bin=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "exec_io_check.sh: $*" >&2; exit 1; }
run() {
  local name=$1 want=$2 rc=0
  shift 2
  "$racelab" "$@" >"$work/$name.out" 2>&1 || rc=$?
  [ "$rc" -eq "$want" ] || { cat "$work/$name.out" >&2; fail "racelab $*: exit $rc, expected $want"; }
}
says() { grep -qF -- "$2" "$work/$1.out" || { cat "$work/$1.out" >&2; fail "$1: the output does not say: $2"; }; }
never() { ! grep -qF -- "$2" "$work/$1.out" || { cat "$work/$1.out" >&2; fail "$1: the output says: $2"; }; }

# 1. stdin
printf 'ready\n' >"$work/in.txt"
run stdin 0 exec -n 20 --timeout 20 --stdin "$work/in.txt" -- "$bin/reads_stdin"
grep -Eq "^  holds +20$" "$work/stdin.out" || { cat "$work/stdin.out"; fail "not 20 of 20 trials read the file"; }
run no_stdin 1 exec -n 2 --timeout 20 -- "$bin/reads_stdin"
says no_stdin "exit status 2"
run stdin_missing 3 exec -n 1 --stdin "$work/nothing.txt" -- "$bin/reads_stdin"
says stdin_missing "--stdin $work/nothing.txt"
run stdin_folder 3 exec -n 1 --stdin "$work" -- "$bin/reads_stdin"
says stdin_folder "a folder, not a file"

# 2. asynchronous cancellation
run async 3 exec -n 3 --timeout 20 -- "$bin/cancel_async"
says async "asynchronous cancellation"

# 3. --real-time
run real_time 0 exec -n 2 --timeout 20 --real-time -- "$bin/alarm_wait"

# 4. synchronisation racelab does not see
run futex 0 exec -s dpor:2 -n 30 --timeout 20 -- "$bin/unseen_futex"
says futex "outside racelab's control (syscall(SYS_futex)"
never futex "dpor complete"
says futex "incomplete"

# ... and one whose thread spins on an atomic (let go: a wait racelab cannot see)
run spin 0 exec -s dpor:2 -n 30 --timeout 20 -- "$bin/spin_wait"
says spin "a thread was let go"
never spin "dpor complete"

# 5. C11 seen whole
run c11_dpor 0 exec -s dpor:2 -n 2000 --timeout 20 --let-go-ms 2000 -- "$bin/c11_lost_update_fixed"
says c11_dpor "dpor complete"
never c11_dpor "dpor complete: 1 classes"
never c11_dpor "warning"

# 6. a point name over the report page
run reproduce 1 reproduce --exec -s pct:2 -n 2000 --timeout 20 --let-go-ms 2000 --no-minimize -o "$work/s.json" \
  -- "$bin/lost_update"
python3 - "$work/s.json" "$work/big.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["decisions"][0]["point"] = "p" * (8 << 20)
json.dump(s, open(sys.argv[2], "w"))
PY
run big_replay 4 replay "$work/big.json"
run big_exec 4 exec -s "replay:$work/big.json" -n 1 --timeout 20 -- "$bin/lost_update"
says big_exec "more bytes cut here"
echo "exec_io_check.sh: ok"
