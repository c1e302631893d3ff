#!/usr/bin/env bash
# tests/cuda/without_device.sh PROBE RACELAB: on a machine with no CUDA device,
# `racelab run cuda_graph_capture_cuda` must exit 3 and say why. Skips (77) where
# the probe finds a device.
set -uo pipefail
probe=$1 racelab=$2
if "$probe" >/dev/null; then echo "a CUDA device is here: nothing to check"; exit 77; fi
out=$("$racelab" run cuda_graph_capture_cuda -n 2 -s random 2>&1); rc=$?
echo "$out"
[[ $rc -eq 3 ]] || { echo "expected exit 3, got $rc"; exit 1; }
grep -q "no CUDA device: cudaGetDeviceCount" <<<"$out" || { echo "expected the reason in the output"; exit 1; }
