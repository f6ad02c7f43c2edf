#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""ctest version_consistency: the one version (CMakeLists.txt project(VERSION)) must be what every
other place says: nccl-rail --version, the 'nccl-rail version X' string in each plugin library,
each plugin's first INFO line at init (the banner, with the ABI), doctor --json, CHANGELOG.md's
newest entry, debian/changelog, the RPM spec, nccl-rail(1) and docs/compatibility.md.
usage: check_version.py SOURCE_DIR BUILD_DIR NCCL_RAIL_BINARY"""
import ctypes
import json
import os
import re
import subprocess
import sys

src, build, cli = sys.argv[1], sys.argv[2], sys.argv[3]
problems = []


def read(rel):
    with open(os.path.join(src, rel), encoding="utf-8") as f:
        return f.read()


m = re.search(r"^project\(nccl-rail VERSION ([0-9]+\.[0-9]+\.[0-9]+)", read("CMakeLists.txt"), re.M)
if not m:
    sys.exit("CMakeLists.txt: no project(nccl-rail VERSION X.Y.Z)")
version = m.group(1)
seen = {"CMakeLists.txt project(VERSION)": version}


def found(where, value):
    seen[where] = value
    if value != version:
        problems.append("%s says %r, CMakeLists.txt says %s" % (where, value, version))


def first(pattern, text, where):
    m = re.search(pattern, text, re.M)
    if not m:
        problems.append("%s: no version found (pattern %s)" % (where, pattern))
        return
    found(where, m.group(1))


out = subprocess.run([cli, "--version"], capture_output=True, text=True).stdout
first(r"^nccl-rail ([0-9.]+) \(git (?:[0-9a-f]+|unknown)\)", out, "nccl-rail --version")
doc = json.loads(subprocess.run([cli, "doctor", "--json", "--root", os.path.join(
    src, "test/fixtures/sysfs/synthetic-xe8640-like")], capture_output=True, text=True).stdout)
found("doctor --json version", doc.get("version"))
for lib in ("libnccl-net-rail.so", "libnccl-tuner-rail.so"):
    with open(os.path.join(build, lib), "rb") as f:
        data = f.read()
    first(r"nccl-rail version ([0-9.]+) \(git ", data.decode("latin-1"), lib + " strings")

# The banner: call init of the tables NCCL 2.28 picks with no NCCL logger, so the plugin logs to
# stderr (NCCL_RAIL_LOG_STDERR=1), in a child so that its stderr can be read.
if os.environ.get("RAIL_BANNER_CHILD"):
    lib = ctypes.CDLL(os.path.join(build, os.environ["RAIL_BANNER_CHILD"]))
    vp = ctypes.c_void_p
    if "tuner" in os.environ["RAIL_BANNER_CHILD"]:
        init = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(vp), ctypes.c_uint64, ctypes.c_size_t,
                                ctypes.c_size_t, vp, vp, vp)
        table = (vp * 2).in_dll(lib, "ncclTunerPlugin_v5")
        ctx = vp()
        init(table[1])(ctypes.byref(ctx), 1, 16, 2, None, None, None)
    else:
        init = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(vp), ctypes.c_uint64, vp, vp, vp)
        table = (vp * 2).in_dll(lib, "ncclNetPlugin_v11")
        ctx = vp()
        cfg = ctypes.c_int(-1)
        init(table[1])(ctypes.byref(ctx), 1, ctypes.byref(cfg), None, None)
    sys.exit(0)
for lib, what, abi in (("libnccl-tuner-rail.so", "tuner", 5), ("libnccl-net-rail.so", "net", 11)):
    env = dict(os.environ, RAIL_BANNER_CHILD=lib, NCCL_RAIL_LOG_STDERR="1")
    # An ASan build's library needs its runtime loaded first into the Python process.
    ldd = subprocess.run(["ldd", os.path.join(build, lib)], capture_output=True, text=True).stdout
    runtimes = re.findall(r"=> (\S*lib(?:asan|ubsan)\.so\S*)", ldd)
    if runtimes:
        env["LD_PRELOAD"] = " ".join(runtimes)
        env["ASAN_OPTIONS"] = "detect_leaks=0:verify_asan_link_order=0"
    err = subprocess.run([sys.executable] + sys.argv, capture_output=True, text=True,
                         env=env).stderr
    infos = [l for l in err.splitlines() if l.startswith("INFO ")]
    # The tuner's names the trained table in use (NCCL_RAIL_MODEL_TABLE).
    tail = ", model table embedded" if what == "tuner" else ""
    first(r"^INFO RAIL nccl-rail ([0-9.]+) \(git (?:[0-9a-f]+|unknown)\): %s plugin, ABI v%d%s$"
          % (what, abi, tail), infos[0] if infos else "", "%s first INFO line" % lib)

first(r"^## ([0-9.]+) ", read("CHANGELOG.md"), "CHANGELOG.md newest entry")
first(r"^nccl-rail \(([0-9.]+)(?:-[0-9]+)?\)", read("debian/changelog"), "debian/changelog")
first(r"^Version:\s+([0-9.]+)$", read("packaging/rpm/nccl-rail.spec"), "packaging/rpm/nccl-rail.spec")
with open(os.path.join(build, "nccl-rail.1"), encoding="utf-8") as f:
    first(r'^\.TH NCCL-RAIL 1 "" "nccl-rail ([0-9.]+)"', f.read(), "nccl-rail.1 (.TH)")
first(r"^This page describes nccl-rail ([0-9.]+)", read("docs/compatibility.md"),
      "docs/compatibility.md")

for where, value in seen.items():
    print("%-45s %s" % (where, value))
for p in problems:
    print("MISMATCH: " + p)
print("version_consistency: %d places, %d mismatches" % (len(seen), len(problems)))
sys.exit(1 if problems else 0)
