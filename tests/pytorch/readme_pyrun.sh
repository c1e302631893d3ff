#!/usr/bin/env bash
# Runs the user guide's `racelab pyrun` commands as written (docs/USING.md,
# "Your own script"), from the repository root, with the racelab under test:
# a command whose comment says it races must exit 1, any other 0.
#
#   readme_pyrun.sh RACELAB docs/USING.md
set -uo pipefail
racelab=$1 readme=$2
cd "$(dirname "$readme")/.." || exit 1
mapfile -t cmds < <(sed -n '/^## Your own script/,/^## /p' "$readme" | grep '^racelab pyrun ')
if [[ ${#cmds[@]} -eq 0 ]]; then
  echo "readme_pyrun: no 'racelab pyrun' command in $readme"
  exit 1
fi
fail=0
for line in "${cmds[@]}"; do
  cmd=${line%%#*}
  comment=${line#*#}
  expected=0
  [[ "$line" == *"#"* && "$comment" == *races* ]] && expected=1
  read -r -a argv <<<"$cmd"
  out=$("$racelab" "${argv[@]:1}" 2>&1)
  rc=$?
  printf '$ %s\n%s\n' "$cmd" "$(tail -n 4 <<<"$out")"
  if [[ $rc -ne $expected ]]; then
    echo "readme_pyrun: exit $rc, expected $expected: $cmd"
    fail=1
  fi
done
[[ $fail -eq 0 ]] && echo "readme_pyrun: ${#cmds[@]} commands as $(basename "$(dirname "$readme")")/$(basename "$readme") says"
exit $fail
