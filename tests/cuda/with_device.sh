#!/usr/bin/env bash
# tests/cuda/with_device.sh PROBE COMMAND...: runs COMMAND where the probe finds a
# CUDA device; skips (77) with the probe's reason where it finds none.
set -uo pipefail
probe=$1; shift
if ! reason=$("$probe"); then echo "skipped: $reason"; exit 77; fi
echo "$reason"
exec "$@"
