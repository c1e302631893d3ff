#!/usr/bin/env bash
# pyrun_from_venv.sh RACELAB: a user's venv, as `--python` takes it. Inside the
# torch root (ci/setup-torch), a venv that sees the system's torch
# (--system-site-packages) gets racelab's Python package with pip, from this
# source tree's python/ (what <prefix>/share/racelab/python installs), with
# nothing downloaded; the venv's Python then imports it from the venv, and
# `racelab pyrun --python VENV/bin/python` runs a script that holds.
# Exit 77 (skipped) without the root.
set -uo pipefail
racelab=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
root=${RACELAB_TORCH_ROOT:-/var/cache/racelab/torch-trixie}
if [[ ! -f "$root/.racelab-packages" || $(id -u) -ne 0 ]]; then
  echo "skipped: needs the torch root at $root (bash ci/setup-torch) and root to enter it"
  exit 77
fi
venv=/tmp/racelab-venv-$$  # inside the root
in_root() { bash "$src/ci/in-torch-root" -- "$@"; }
trap 'in_root rm -rf "$venv" "$venv.src" >/dev/null 2>&1' EXIT
fail() { echo "pyrun_from_venv: $*" >&2; exit 1; }

in_root python3 -m venv --system-site-packages "$venv" || fail "python3 -m venv failed in the root"
# From a copy: a build writes build/ and *.egg-info beside the sources.
in_root bash -c "mkdir -p $venv.src && cp -r python/pyproject.toml python/racelab $venv.src/" ||
  fail "cannot copy python/ in the root"
in_root "$venv/bin/python" -m pip install -q --no-index --no-build-isolation --no-deps "$venv.src" ||
  fail "pip install python/ into the venv failed"
where=$(in_root bash -c "cd / && $venv/bin/python -c 'import racelab.worker, racelab; print(racelab.__file__)'") ||
  fail "the venv cannot import racelab"
[[ "$where" == "$venv/"* ]] || fail "the venv imports racelab from $where, not from its own site-packages"
out=$(cd "$src" && "$racelab" pyrun --python "bash $src/ci/in-torch-root -- $venv/bin/python" -n 2 -s random \
  --timeout 240 -- tests/pytorch/scripts/wait_event.py 2>&1)
rc=$?
[[ $rc -eq 0 ]] || { echo "$out"; fail "pyrun with the venv's python: exit $rc, expected 0"; }
grep -q "holds  *2" <<<"$out" || { echo "$out"; fail "pyrun with the venv's python: not 2 trials that hold"; }
echo "pyrun_from_venv: racelab pip-installed into a venv ($where); pyrun with its python holds 2 of 2"
