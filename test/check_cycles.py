#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""No circle of files anywhere in the tree (issue 31): calls between .c files and includes.

- calls: the compiled objects of a build tree (`nm`): an object that uses a symbol another
  object defines is an arrow from its source file to the other's; any circle of source files
  (two files calling each other included) is a finding. A call through a function pointer (an
  ops table, a hook) is not an arrow, which is the point: lower layers dispatch upward only
  through tables they are handed. Static inline functions in headers are covered by the include
  check below.
- includes: every .c/.h of the source tree (build trees and third-party copies aside): a header
  that includes itself through others is a finding.

Each object's source comes from its dependency file (`x.c.o.d`, which CMake writes next to the
object); an object whose source is gone (a stale build) is skipped.

Usage: check_cycles.py SOURCE_DIR BUILD_DIR   (exit 0 clean, 1 on a finding, one line each)
       check_cycles.py --self-test            (compiles made-up trees; each finding is caught)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
SKIP_DIRS = {".git", "fabric", "fixtures"}


def strongly_connected(graph):
    """Components of more than one node (Tarjan, iterative), each sorted; sorted list."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def object_source(obj, src):
    """The source file (relative to src) an object was compiled from, or None."""
    dep = obj + ".d"
    if not os.path.isfile(dep):
        return None
    with open(dep, encoding="utf-8", errors="replace") as f:
        text = f.read().replace("\\\n", " ")
    m = re.match(r"[^:]+:\s*(\S+\.c)\b", text)
    if not m:
        return None
    path = os.path.realpath(m.group(1) if os.path.isabs(m.group(1))
                            else os.path.join(os.path.dirname(obj), m.group(1)))
    root = os.path.realpath(src)
    if not path.startswith(root + os.sep) or not os.path.isfile(path):
        return None
    return os.path.relpath(path, root)


def nm_symbols(objs, flag):
    """{object: [symbol]} from one nm run over every object (nm -A prefixes each line with it)."""
    out = {o: [] for o in objs}
    if not objs:
        return out
    text = subprocess.run(["nm", "-A", flag] + sorted(objs), capture_output=True, text=True,
                          check=False).stdout
    for line in text.splitlines():
        head, _, rest = line.partition(": ")
        if not rest:
            head, _, rest = line.rpartition(":")
        fields = rest.split()
        if head in out and fields:
            out[head].append(fields[-1])
    return out


def call_graph(src, build):
    objects = {}
    for d, dirs, names in os.walk(build):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS]
        for n in names:
            if n.endswith(".o"):
                s = object_source(os.path.join(d, n), src)
                if s and not any(part in SKIP_DIRS for part in s.split(os.sep)):
                    objects[os.path.join(d, n)] = s
    # A source compiled into several targets is one node; a symbol two sources define (two
    # programs' main, a test double) is ambiguous and gives no arrow.
    defined = {}
    for obj, syms in nm_symbols(list(objects), "--defined-only").items():
        for sym in syms:
            defined.setdefault(sym, set()).add(objects[obj])
    graph = {s: set() for s in objects.values()}
    for obj, syms in nm_symbols(list(objects), "--undefined-only").items():
        s = objects[obj]
        for sym in syms:
            owners = defined.get(sym, ())
            if len(owners) == 1:
                (owner,) = owners
                if owner != s:
                    graph[s].add(owner)
    return graph


def include_graph(src):
    files = {}
    for d, dirs, names in os.walk(src):
        rel_dir = os.path.relpath(d, src)
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith("build")]
        if rel_dir.startswith("build"):
            continue
        for n in names:
            if n.endswith((".c", ".h")):
                p = os.path.join(d, n)
                with open(p, encoding="utf-8", errors="replace") as f:
                    text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
                files[os.path.relpath(p, src)] = (d, INCLUDE.findall(text))
    graph = {}
    for rel, (d, incs) in files.items():
        graph[rel] = set()
        for inc in incs:
            # Quoted includes resolve next to the file first, then anywhere in the tree that ends
            # with the path (the project's include roots: common/, net-plugin/, tools/, ...).
            here = os.path.relpath(os.path.normpath(os.path.join(d, inc)), src)
            if here in files:
                graph[rel].add(here)
                continue
            cands = [f for f in files if f == inc or f.endswith("/" + inc)]
            if len(cands) == 1:
                graph[rel].add(cands[0])
    return graph


def check(src, build):
    errors = []
    for comp in strongly_connected(call_graph(src, build)):
        errors.append("call circle between " + str(len(comp)) + " files: " + ", ".join(comp))
    for comp in strongly_connected(include_graph(src)):
        errors.append("include circle: " + ", ".join(comp))
    return errors


def self_test():
    cc = shutil.which("cc") or shutil.which("gcc")
    failures = 0

    def tree(files):
        d = tempfile.mkdtemp(prefix="check_cycles.")
        for name, text in files.items():
            p = os.path.join(d, name)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
        os.makedirs(os.path.join(d, "out"))
        for name in files:
            if name.endswith(".c"):
                obj = os.path.join(d, "out", os.path.basename(name) + ".o")
                subprocess.run([cc, "-c", "-MD", "-MF", obj + ".d", "-I", os.path.join(d, "lib"),
                                os.path.join(d, name), "-o", obj], check=True)
        return d

    def expect(label, files, want):
        nonlocal failures
        d = tree(files)
        got = check(d, os.path.join(d, "out"))
        ok = (any(want in e for e in got) if want else not got)
        print(("ok   " if ok else "FAIL ") + label + ": " + ("; ".join(got) or "clean"))
        failures += not ok
        shutil.rmtree(d)

    lower = {"lib/low.h": "int low(int);\n", "lib/low.c": '#include "low.h"\nint low(int x){return x;}\n',
             "lib/high.h": "int high(int);\n",
             "lib/high.c": '#include "high.h"\n#include "low.h"\nint high(int x){return low(x);}\n'}
    expect("layered calls", lower, None)
    up = dict(lower)
    up["lib/low.c"] = '#include "low.h"\nint high(int);\nint low(int x){return x ? high(x - 1) : 0;}\n'
    expect("a call back up (prototype written by hand)", up, "call circle between 2 files")
    three = dict(lower)
    three["lib/mid.c"] = "int high(int);\nint mid(int x){return high(x);}\n"
    three["lib/low.c"] = "int mid(int);\nint low(int x){return x ? mid(x - 1) : 0;}\n"
    expect("a circle of three files", three, "call circle between 3 files")
    table = dict(lower)
    table["lib/low.c"] = ('#include "low.h"\nint (*hook)(int);\n'
                          "int low(int x){return hook ? hook(x) : x;}\n")
    table["lib/high.c"] = ('#include "high.h"\n#include "low.h"\nextern int (*hook)(int);\n'
                           "static int up(int x){return x;}\nint high(int x){hook = up; return low(x);}\n")
    expect("an upward call through a hook is no arrow", table, None)
    inc = dict(lower)
    inc["lib/a.h"] = '#include "b.h"\n'
    inc["lib/b.h"] = '#include "a.h"\n'
    expect("a header circle", inc, "include circle: lib/a.h, lib/b.h")
    return 1 if failures else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-2].strip(), file=sys.stderr)
        return 2
    errors = check(sys.argv[1], sys.argv[2])
    for e in errors:
        print(e)
    if not errors:
        print("no circle: calls between the build's objects and includes of the source tree")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
