#!/usr/bin/env bash
# Runs one racelab command against real PyTorch and checks its exit code.
#
#   torch_check.sh EXPECTED_RC GREP_TEXT -- RACELAB ARGS...
#
# The Python: $RACELAB_PYTHON when set (a venv's python, say), else this
# machine's python3 when it imports torch (as inside the Debian 13 root, where
# ci/test-debian13 runs the suite), else the Debian root that ci/setup-torch
# makes, entered with ci/in-torch-root. With none, it exits 77, which CTest
# reports as skipped, and says why. GREP_TEXT ("" for none) must appear in the
# command's output.
set -uo pipefail
expected=$1 text=$2
shift 2
[[ "${1:-}" == "--" ]] && shift
src=$(cd "$(dirname "$0")/../.." && pwd)
if [[ -z "${RACELAB_PYTHON:-}" ]] && python3 -c 'import torch' >/dev/null 2>&1; then
  export RACELAB_PYTHON=python3
fi
if [[ -z "${RACELAB_PYTHON:-}" ]]; then
  root=${RACELAB_TORCH_ROOT:-/var/cache/racelab/torch-trixie}
  if [[ ! -f "$root/.racelab-packages" ]]; then
    echo "skipped: no Python with torch: RACELAB_PYTHON is not set and there is no torch root at $root (make one with: bash ci/setup-torch)"
    exit 77
  fi
  if [[ $(id -u) -ne 0 ]]; then
    echo "skipped: the torch root at $root needs root to enter (ci/in-torch-root), and RACELAB_PYTHON is not set"
    exit 77
  fi
  export RACELAB_PYTHON="bash $src/ci/in-torch-root -- python3"
fi
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [[ $rc -ne $expected ]]; then
  echo "torch_check: exit code $rc, expected $expected: $*"
  exit 1
fi
if [[ -n "$text" ]] && ! grep -qF -- "$text" <<<"$out"; then
  echo "torch_check: the output lacks '$text': $*"
  exit 1
fi
echo "torch_check: ok (exit $rc)"
