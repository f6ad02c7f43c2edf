#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Slurm prolog (Prolog= in slurm.conf, or a script it runs): a node health check with
# `nccl-rail doctor --json`. Exit 0: the node is fit for NCCL jobs (warnings are only logged);
# any error finding (no RDMA device, a port down, memlock too low, a plugin that NCCL cannot
# load, ...) makes the prolog fail, so Slurm drains the node instead of letting jobs fall back
# to TCP. The full report stays in $NCCL_RAIL_PROLOG_LOG (default /var/log/nccl-rail-doctor.json).
set -u
log=${NCCL_RAIL_PROLOG_LOG:-/var/log/nccl-rail-doctor.json}
nccl-rail doctor --json >"$log"
rc=$?
if [ "$rc" -ne 0 ]; then
  # One line per error for the slurmd log (Slurm shows the prolog's stderr on failure).
  python3 -c '
import json, sys
for f in json.load(open(sys.argv[1]))["findings"]:
    if f["severity"] == "error":
        print("nccl-rail doctor: %s %s: %s" % (f["id"], f["subject"], f["message"]), file=sys.stderr)
' "$log" || echo "nccl-rail doctor failed (exit $rc), see $log" >&2
  exit 1
fi
exit 0
