#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""ctest: `nccl-rail doctor --json` on fixtures and on the live node; every document must validate
against docs/doctor.schema.json, the exit status must be 1 exactly when a finding is an error, and
each fixture must give the findings its failure mode is about.
usage: check_doctor_json.py NCCL_RAIL_BINARY SOURCE_DIR"""
import json
import os
import subprocess
import sys

import jsonschema

binary, src = sys.argv[1], sys.argv[2]
fixtures = os.path.join(src, "test", "fixtures")
with open(os.path.join(src, "docs", "doctor.schema.json")) as f:
    schema = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)

# (root, hwloc xml or None, extra env, expected exit status or None (live), {(id, severity)})
CASES = [
    ("sysfs/synthetic-xe8640-like", None, {}, 0, {("roce.gid", "ok"), ("gdr.peermem", "ok")}),
    ("sysfs/doctor-no-rdma", None, {}, 1, {("rdma.devices", "error")}),
    ("sysfs/doctor-port-down", None, {}, 1, {("rdma.port", "warn"), ("rdma.devices", "error")}),
    ("sysfs/doctor-container", None, {}, 1, {("sys.dev_infiniband", "error"),
                                             ("sys.memlock", "error")}),
    ("sysfs/doctor-degraded", None, {}, 0, {("rdma.speed", "warn"), ("pcie.link", "warn")}),
    ("sysfs/doctor-far-gpu", None, {}, 0, {("topo.gpu_nic", "warn"), ("gpu.bar1", "warn")}),
    ("sysfs/doctor-acs", None, {}, 0, {("pcie.acs", "warn")}),
    ("sysfs/doctor-roce", None, {}, 1, {("roce.gid", "error"), ("roce.gid", "warn")}),
    ("sysfs/synthetic-xe8640-like", None, {"NCCL_ALGO": "NVLink"}, 1, {("env.algo", "error")}),
    ("sysfs/doctor-no-rdma", "hwloc-xml/mpibind_ibm-ac922-lassen_4xV100_4xmlx5.xml", {}, 1,
     {("topo.source", "info")}),
    (None, None, {}, None, {("rdma.devices", None)}),  # live node: must not crash
]

failed = 0
for root, xml, extra, want_rc, want in CASES:
    cmd = [binary, "doctor", "--json"]
    if root:
        cmd += ["--root", os.path.join(fixtures, root)]
    if xml:
        cmd += ["--hwloc-xml", os.path.join(fixtures, xml)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NCCL_")}
    env.update(extra)
    name = "%s%s%s" % (root or "live node", " + " + xml if xml else "",
                       " " + str(extra) if extra else "")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    problems = []
    if p.returncode not in (0, 1):
        problems.append("exit status %d (crash or usage error): %s" % (p.returncode, p.stderr))
    else:
        try:
            doc = json.loads(p.stdout)
        except ValueError as e:
            doc = None
            problems.append("not JSON: %s" % e)
        if doc is not None:
            errors = sorted(validator.iter_errors(doc), key=str)
            problems += ["schema: %s at %s" % (e.message, list(e.path)) for e in errors[:5]]
            has_error = any(f["severity"] == "error" for f in doc.get("findings", []))
            if p.returncode != int(has_error) or doc.get("exit_code") != p.returncode:
                problems.append("exit status %d, exit_code %s, error findings: %s" %
                                (p.returncode, doc.get("exit_code"), has_error))
            if want_rc is not None and p.returncode != want_rc:
                problems.append("exit status %d, expected %d" % (p.returncode, want_rc))
            got = {(f["id"], f["severity"]) for f in doc.get("findings", [])}
            ids = {f["id"] for f in doc.get("findings", [])}
            for fid, sev in want:
                if (sev is None and fid not in ids) or (sev is not None and (fid, sev) not in got):
                    problems.append("missing finding %s/%s" % (fid, sev or "*"))
            if root is None and not os.path.isdir("/sys/class/infiniband"):
                if ("rdma.devices", "error") not in got:
                    problems.append("live node without /sys/class/infiniband: rdma.devices "
                                    "must be an error")
    print("%-70s %s" % (name[:70], "ok" if not problems else "FAILED"))
    for msg in problems:
        print("    " + msg)
    failed += bool(problems)

print("check_doctor_json: %d case(s), %d failed" % (len(CASES), failed))
sys.exit(1 if failed else 0)
