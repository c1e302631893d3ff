#!/usr/bin/env bash
# pytest -p racelab.pytest_plugin on the torch root: the marked racy test fails with
# racelab's verdict and a replay line, the marked fixed test passes, the unmarked one runs as
# pytest runs it. pytest runs inside the root, and calls the lean racelab there (its libfmt
# beside it, cli/CMakeLists.txt).
#
#   pytest_plugin_check.sh RACELAB     (RACELAB: the built binary, inside the repository)
set -uo pipefail
racelab=$(realpath "$1")
src=$(cd "$(dirname "$0")/../.." && pwd)
rel=${racelab#"$src"/}
[[ $rel != "$racelab" ]] || { echo "pytest_plugin_check: $racelab is not inside $src"; exit 1; }
root=${RACELAB_TORCH_ROOT:-/var/cache/racelab/torch-trixie}
if [[ ! -f "$root/.racelab-packages" || $(id -u) -ne 0 ]]; then
  echo "skipped: needs the torch root ($root, bash ci/setup-torch) and root to enter it"
  exit 77
fi
if ! grep -q python3-pytest "$root/.racelab-packages"; then
  echo "skipped: the torch root has no pytest yet (bash ci/setup-torch installs python3-pytest)"
  exit 77
fi
out=$(bash "$src/ci/in-torch-root" -- env RACELAB="/src/$rel" PYTHONPATH=/src/python \
  python3 -m pytest -p racelab.pytest_plugin --racelab-trials 10 -p no:cacheprovider -q -rA \
  tests/pytorch/pytest/test_serving.py -k "handlers" 2>&1)
rc=$?
printf '%s\n' "$out"
fail() { echo "pytest_plugin_check: $*"; exit 1; }
[[ $rc -eq 1 ]] || fail "pytest exited $rc, expected 1 (one test failed)"
grep -q "1 failed, 1 passed" <<<"$out" || fail "expected '1 failed, 1 passed'"
grep -q "FAILED tests/pytorch/pytest/test_serving.py::test_handlers_race" <<<"$out" || fail "the racy test did not fail"
grep -q "PASSED tests/pytorch/pytest/test_serving.py::test_handlers_locked" <<<"$out" || fail "the fixed test did not pass"
grep -q "racelab replay racelab1:" <<<"$out" || fail "the failure has no replay line"
grep -q "Detected that you are using FX" <<<"$out" || fail "the failure does not name the error"
echo "pytest_plugin_check: ok"
