#!/usr/bin/env bash
# trials_to_failure_check.sh BUILD_DIR -- trials_to_failure.sh on lost_update
# with 1 seed prints a well-formed table: the header, one row per strategy
# (6 sampled, dfs:2, dpor:2), each finding the bug (every strategy finds
# lost_update within a few dozen trials, so a row that says 0/1 or >200 means
# the script no longer reads racelab's summary), and the throughput line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(bash "$here/trials_to_failure.sh" "$1" 1 200 lost_update)
echo "$out"
fail() { echo "trials_to_failure_check.sh: $*" >&2; exit 1; }
[ "$(sed -n 1p <<<"$out")" = "| program | strategy | found k/S | median trials | worst |" ] || fail "no header"
for st in random pct:2 pct:3 pos surw auto dfs:2 dpor:2; do
  grep -Eq "^\| lost_update \| $st \| 1/1 \| [0-9]+ \| [0-9]+ \|$" <<<"$out" || fail "no row for $st finding 1/1"
done
[ "$(grep -c '^| lost_update |' <<<"$out")" -eq 8 ] || fail "expected 8 rows"
grep -Eq '^[0-9]+ trials in [0-9.]+ s inside the cells: [0-9]+ trials/s' <<<"$out" || fail "no throughput line"
echo "trials_to_failure_check.sh: ok"
