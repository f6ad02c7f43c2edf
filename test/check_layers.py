#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the include graph of net-plugin/ and of tuner-plugin/ (one folder per layer each):

- an include of a net-plugin header names its folder ("wire/net_wire.h"), with net-plugin/ as the
  include root; a bare name that is a net-plugin header is refused;
- no cycle between files (a header including, through others, itself);
- no cycle between folders, and no folder including a higher layer than itself
  (LAYERS, lowest first);
- every file lies in a known layer folder, and the pure cores (files without verbs) of the lower
  layers do not include <infiniband/verbs.h> (wire/, rails/ and telemetry/ are verbs-free as a
  whole);
- the sources of the pure core targets (add_library(rail_net_<layer>_core ...) and the lists they
  name in net-plugin/CMakeLists.txt) and their headers reach no <infiniband/...> header, directly
  or through any net-plugin header they include;
- every libibverbs call goes through the seam: no ibv_*() call outside transport/net_verbs.c and
  transport/verbs_lib.c (the library loaded at run time and the table that calls it), the string
  helpers ibv_wc_status_str / ibv_event_type_str included (the plugin does not link libibverbs).

- no cycle between modules (x.c with x.h as one node: x.c including y.h while y.c includes x.h
  is a cycle even though no header includes itself); there is no allowlist;
- one header per module (in the ONE_HEADER folders): a header declares only functions its own
  x.c defines (or none defined anywhere), so that each call between modules is an include the module-cycle check sees (a
  shared header declaring several files' functions would hide their cycle).

The tuner (--tuner): the same include, folder, one-header and module-cycle checks over
tuner-plugin/ (TUNER_LAYERS, lowest first; every folder one header per module), without the verbs
checks; besides, every include of a tuner header anywhere in the tree names its folder
("model/cost_model.h"), and neither plugin folder (tuner-plugin/, profiler-plugin/) includes a
header of the other: what both use lies below both (common/).

Usage: check_layers.py [SOURCE_DIR]          (net plugin; exit 0 clean, 1 on a finding, one line each)
       check_layers.py --tuner [SOURCE_DIR]  (tuner plugin)
       check_layers.py --self-test           (the checker finds each kind of finding in made-up trees)
"""
import os
import re
import sys
import tempfile

LAYERS = ["wire", "rails", "telemetry", "transport", "gdr", "protocol", "abi"]
VERBS_FREE = {"wire", "rails", "telemetry"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
SEAM = ("transport/net_verbs.c", "transport/verbs_lib.c")
VERBS_CALL = re.compile(r"\bibv_([a-z_0-9]+)\s*\(")
ONE_HEADER = {"protocol"}  # folders whose headers declare their own module's functions only
# The tuner's layers, lowest first: the model (NCCL's constants, topology inputs, graph-search
# emulation, step model, refinements, trained table), the readers of calibration inputs, the
# decisions (calibration applied, decision table, extrapolation, exploration, rules, chunk bounds),
# and the ABI (per-communicator state, versioned exports).
TUNER_LAYERS = ["model", "measure", "decide", "abi"]
# Folders of the tree outside the plugins whose includes of tuner headers must name the folder.
TUNER_USERS = ["common", "profiler-plugin", "net-plugin", "tools", "test", "bench", "tuner-fit"]


def scan(root):
    """{relative path: [(kind, target)]} for every .c/.h file under root."""
    files = {}
    calls.clear()
    texts.clear()
    for d, _, names in os.walk(root):
        for n in sorted(names):
            if n.endswith((".c", ".h")):
                p = os.path.join(d, n)
                rel = os.path.relpath(p, root).replace(os.sep, "/")
                with open(p, encoding="utf-8", errors="replace") as f:
                    text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
                files[rel] = INCLUDE.findall(text)
                texts[rel] = text
                calls[rel] = sorted(set(VERBS_CALL.findall(re.sub(r"//[^\n]*", "", text))))
    return files


calls = {}  # file -> libibverbs functions it calls (filled by scan)
texts = {}  # file -> its text without comments (filled by scan)
# A function definition (column 0, not static) and a prototype (column 0, ends in ';').
DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \t*]*?\b(\w+)\(([^;{}]*)\)\s*\{", re.M)
PROTOTYPE = re.compile(r"^(?!static\b|typedef\b)[A-Za-z_][\w \t*]*?\b(\w+)\(([^;{}]*)\)[^;{}]*;",
                       re.M)


def find_cycle(graph):
    """A list of nodes forming a cycle, or None (iterative depth-first search)."""
    state = {}
    for start in sorted(graph):
        if state.get(start):
            continue
        stack = [(start, iter(sorted(graph.get(start, ()))))]
        path = [start]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
                continue
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(sorted(graph.get(nxt, ())))))
    return None


def core_sources(cmake_text):
    """Files (relative to net-plugin/) of the pure core targets named in its CMakeLists.txt."""
    lists = dict(re.findall(r"set\((\w+)\s([^)]*)\)", cmake_text))
    out = set()
    for body in re.findall(r"add_library\(rail_net_\w+_core\s+STATIC\s([^)]*)\)", cmake_text):
        for var in re.findall(r"\$\{(\w+)\}", body):
            body += " " + lists.get(var, "")
        out.update(re.findall(r"\$\{N\}/([\w/]+\.c)", body))
    return out


def check_pure(files, pure):
    """Findings for pure files (and their headers) that reach a verbs header."""
    errors = []
    todo = set()
    for c in pure:
        todo.add(c)
        if c[:-2] + ".h" in files:
            todo.add(c[:-2] + ".h")
    for start in sorted(todo):
        if start not in files:
            errors.append(f"{start}: listed in a pure core target but not found")
            continue
        seen, stack = {start}, [[start]]
        while stack:
            path = stack.pop()
            for kind, target in files.get(path[-1], ()):
                if kind == "<" and target.startswith("infiniband/"):
                    errors.append(f"{start}: pure core reaches <{target}> through "
                                  + " -> ".join(path))
                    stack = []
                    break
                if kind == '"' and target in files and target not in seen:
                    seen.add(target)
                    stack.append(path + [target])
    return errors


def check(root, pure=(), layers=None, one_header=None, verbs=True):
    layers = LAYERS if layers is None else layers
    one_header = ONE_HEADER if one_header is None else one_header
    files = scan(root)
    headers = {p for p in files if p.endswith(".h")}
    by_name = {}
    for h in headers:
        by_name.setdefault(os.path.basename(h), []).append(h)
    errors = []
    file_graph = {p: set() for p in files}
    folder_graph = {}
    for src, incs in sorted(files.items()):
        folder = src.split("/")[0] if "/" in src else ""
        if folder not in layers:
            errors.append(f"{src}: not in a layer folder ({', '.join(layers)})")
            continue
        for kind, target in incs:
            if kind == "<":
                if target.startswith("infiniband/") and folder in VERBS_FREE:
                    errors.append(f"{src}: includes <{target}> but {folder}/ is verbs-free")
                continue
            if target in headers:
                dst = target
            elif os.path.basename(target) in by_name and "/" not in target:
                errors.append(f'{src}: #include "{target}" must name its folder '
                              f'("{by_name[target][0]}")')
                continue
            else:
                continue  # common/, tuner-plugin/, nccl/ headers: outside the net plugin
            file_graph[src].add(dst)
            dfolder = dst.split("/")[0]
            if dfolder != folder:
                folder_graph.setdefault(folder, set()).add(dfolder)
                if dfolder not in layers:
                    continue  # reported as a file outside the layers
                if layers.index(dfolder) > layers.index(folder):
                    errors.append(f"{src}: includes {dst}: {folder}/ is below {dfolder}/")
    for src, names in sorted(calls.items()) if verbs else ():
        if names and src not in SEAM:
            errors.append(f"{src}: calls {', '.join('ibv_' + n for n in names)} outside the "
                          f"verbs seam ({', '.join(SEAM)})")
    cyc = find_cycle(file_graph)
    if cyc:
        errors.append("include cycle between files: " + " -> ".join(cyc))
    cyc = find_cycle(folder_graph)
    if cyc:
        errors.append("include cycle between folders: " + " -> ".join(cyc))
    for cyc in module_cycles(files):
        errors.append("modules include each other: " + " -> ".join(cyc))
    errors += check_headers(files, one_header)
    errors += check_pure(files, pure)
    return errors, files, folder_graph


def check_tuner_users(src, tuner_root="tuner-plugin", users=None):
    """Findings outside the tuner: a bare include of a tuner header, and a plugin folder
    (tuner-plugin/, profiler-plugin/) including a header of the other."""
    users = TUNER_USERS if users is None else users
    tuner = set()
    for d, _, names in os.walk(os.path.join(src, tuner_root)):
        for n in names:
            if n.endswith(".h"):
                rel = os.path.relpath(os.path.join(d, n), os.path.join(src, tuner_root))
                tuner.add(rel.replace(os.sep, "/"))
    tuner_names = {os.path.basename(h): h for h in tuner}
    prof = set()
    prof_dir = os.path.join(src, "profiler-plugin")
    if os.path.isdir(prof_dir):
        prof = {n for n in os.listdir(prof_dir) if n.endswith(".h")}
    errors = []
    for top in [tuner_root] + users:
        for d, dirs, names in os.walk(os.path.join(src, top)):
            dirs[:] = sorted(x for x in dirs if not x.startswith("build") and x != "fixtures")
            for n in sorted(names):
                if not n.endswith((".c", ".h")):
                    continue
                p = os.path.join(d, n)
                rel = os.path.relpath(p, src).replace(os.sep, "/")
                with open(p, encoding="utf-8", errors="replace") as f:
                    text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
                for kind, target in INCLUDE.findall(text):
                    if kind != '"':
                        continue
                    base = os.path.basename(target)
                    if top == tuner_root and (base in prof or "profiler-plugin/" in target):
                        errors.append(f'{rel}: includes "{target}" of profiler-plugin/: the tuner '
                                      "and the profiler share only what lies below both (common/)")
                    elif top == "profiler-plugin" and (target in tuner or base in tuner_names
                                                       or "tuner-plugin/" in target):
                        errors.append(f'{rel}: includes "{target}" of tuner-plugin/: the profiler '
                                      "and the tuner share only what lies below both (common/)")
                    elif "/" not in target and base in tuner_names and top != tuner_root:
                        errors.append(f'{rel}: #include "{target}" must name its folder '
                                      f'("{tuner_names[base]}")')
    return errors


def check_headers(files, one_header=None):
    """Findings for headers declaring functions that another module's .c defines."""
    defined = {}
    for src in sorted(files):
        if src.endswith(".c"):
            for name, _ in DEFINITION.findall(texts.get(src, "")):
                defined.setdefault(name, set()).add(src)
    errors = []
    one_header = ONE_HEADER if one_header is None else one_header
    for h in sorted(p for p in files if p.endswith(".h") and p.split("/")[0] in one_header):
        own = h[:-2] + ".c"
        for name, _ in PROTOTYPE.findall(texts.get(h, "")):
            where = defined.get(name, set())
            if where and own not in where:
                d = sorted(where)[0]
                errors.append(f"{h}: declares {name}(), defined in {d}: one header per module "
                              f"(declare it in {d[:-2]}.h)")
    return errors


def module_cycles(files):
    """Cycles between modules (x.c + x.h as one node), each reported once."""
    graph = {}
    mod = lambda p: p.rsplit(".", 1)[0]
    for src, incs in files.items():
        for kind, target in incs:
            if kind == '"' and target in files and mod(target) != mod(src):
                graph.setdefault(mod(src), set()).add(mod(target))
    found = []
    while True:
        cyc = find_cycle(graph)
        if not cyc:
            return found
        found.append(cyc)
        graph[cyc[0]].discard(cyc[1])  # cut one edge and look for the next


def self_test():
    cases = {  # tree -> a word the finding must contain (None: must pass)
        "clean": ({"wire/a.h": "", "rails/b.h": '#include "wire/a.h"'}, None),
        "upward": ({"wire/a.h": '#include "rails/b.h"', "rails/b.h": ""}, "is below"),
        "bare": ({"wire/a.h": "", "rails/b.c": '#include "a.h"'}, "must name its folder"),
        "file cycle": ({"rails/a.h": '#include "rails/b.h"', "rails/b.h": '#include "rails/a.h"'},
                       "between files"),
        "module cycle": ({"rails/a.h": "", "rails/a.c": '#include "rails/b.h"',
                          "rails/b.h": "", "rails/b.c": '#include "rails/a.h"'},
                         "modules include each other"),
        # The circle issue 20 removed: two files that call each other through one shared header
        # (no include cycle to see), then the same with one header per module.
        "shared header": ({"protocol/comm.h": "void fail(void);\nvoid link_fail(void);",
                           "protocol/errors.c": '#include "protocol/comm.h"\n'
                                                "void fail(void) { link_fail(); }",
                           "protocol/state.c": '#include "protocol/comm.h"\n'
                                               "void link_fail(void) { fail(); }"},
                          "one header per module"),
        "split circle": ({"protocol/errors.h": "void fail(void);",
                          "protocol/errors.c": '#include "protocol/errors.h"\n'
                                               '#include "protocol/state.h"\n'
                                               "void fail(void) { link_fail(); }",
                          "protocol/state.h": "void link_fail(void);",
                          "protocol/state.c": '#include "protocol/state.h"\n'
                                              '#include "protocol/errors.h"\n'
                                              "void link_fail(void) { fail(); }"},
                         "modules include each other"),
        "split chain": ({"protocol/errors.h": "void fail(void);",
                         "protocol/errors.c": '#include "protocol/errors.h"\n'
                                              "static int n;\nvoid fail(void) { n++; }",
                         "protocol/state.h": "void link_fail(void);\nstatic inline int f(void)"
                                             " { return 0; }",
                         "protocol/state.c": '#include "protocol/state.h"\n'
                                             '#include "protocol/errors.h"\n'
                                             "void link_fail(void) { fail(); }"}, None),
        "module chain": ({"rails/a.h": "", "rails/a.c": '#include "rails/b.h"',
                          "rails/b.h": "", "rails/b.c": '#include "wire/c.h"', "wire/c.h": ""},
                         None),
        "pure core": ({"protocol/p.c": '#include "protocol/p.h"',
                       "protocol/p.h": '#include "protocol/comm.h"',
                       "protocol/comm.h": "#include <infiniband/verbs.h>"}, "pure core reaches"),
        "pure clean": ({"protocol/p.c": '#include "protocol/p.h"',
                        "protocol/p.h": '#include "wire/w.h"', "wire/w.h": "#include <stdint.h>",
                        "protocol/comm.h": "#include <infiniband/verbs.h>"}, None),
        "verbs": ({"wire/a.c": "#include <infiniband/verbs.h>"}, "verbs-free"),
        "stray": ({"misc/a.c": ""}, "not in a layer folder"),
        "bypass": ({"transport/a.c": "int f(void) { return ibv_fork_init(); }"}, "verbs seam"),
        "seam": ({"transport/net_verbs.c": "int f(void) { return ibv_fork_init(); }",
                  "transport/verbs_lib.c": "int g(void) { return ibv_fork_init(); }"}, None),
        "status string": ({"protocol/b.c": 'const char *g(int s) { return ibv_wc_status_str(s); }'},
                          "verbs seam"),
        "commented": ({"wire/a.h": '/* #include "rails/b.h" */', "rails/b.h": ""}, None),
    }
    bad = 0
    for name, (tree, want) in cases.items():
        with tempfile.TemporaryDirectory() as d:
            for rel, text in tree.items():
                os.makedirs(os.path.join(d, os.path.dirname(rel)), exist_ok=True)
                with open(os.path.join(d, rel), "w", encoding="utf-8") as f:
                    f.write(text + "\n")
            errors = check(d, pure={"protocol/p.c"} if "protocol/p.c" in tree else ())[0]
        ok = not errors if want is None else any(want in e for e in errors)
        print(f"check_layers self-test {name}: {'ok' if ok else 'WRONG'} {errors}")
        bad += not ok
    # The tuner's layers (model < measure < decide < abi), every folder one header per module.
    tuner_cases = {
        "tuner clean": ({"model/m.h": "int m(void);", "model/m.c": '#include "model/m.h"\n'
                         "int m(void) { return 0; }",
                         "measure/r.h": '#include "model/m.h"',
                         "decide/d.c": '#include "measure/r.h"\n#include "model/m.h"',
                         "abi/core.c": '#include "decide/d.h"', "decide/d.h": ""}, None),
        # A model header reaching up into the readers (the table borrowing the log parser's
        # helpers was one such arrow).
        "tuner upward": ({"model/table.c": '#include "measure/log.h"', "measure/log.h": ""},
                         "model/ is below measure/"),
        "tuner upward abi": ({"decide/d.c": '#include "abi/core.h"', "abi/core.h": ""},
                             "decide/ is below abi/"),
        "tuner bare": ({"model/m.h": "", "decide/d.c": '#include "m.h"'},
                       "must name its folder"),
        # The cost model's circle: the sub-modules include the model's header, which the model's
        # own header file reaches back through a shared internal header.
        "tuner circle": ({"model/cost.h": "int cost(void);",
                          "model/cost.c": '#include "model/cost_internal.h"\n'
                                          "int cost(void) { return part(); }",
                          "model/cost_internal.h": '#include "model/cost.h"\nint part(void);',
                          "model/part.c": '#include "model/cost_internal.h"\n'
                                          "int part(void) { return 1; }"},
                         "one header per module"),
        "tuner module circle": ({"measure/a.h": "", "measure/a.c": '#include "measure/b.h"',
                                 "measure/b.h": "", "measure/b.c": '#include "measure/a.h"'},
                                "modules include each other"),
        "tuner stray": ({"calib.c": ""}, "not in a layer folder"),
        "tuner verbs calls ignored": ({"model/a.c": "int f(void) { return ibv_fork_init(); }"},
                                      None),
    }
    for name, (tree, want) in tuner_cases.items():
        with tempfile.TemporaryDirectory() as d:
            for rel, text in tree.items():
                os.makedirs(os.path.join(d, os.path.dirname(rel)), exist_ok=True)
                with open(os.path.join(d, rel), "w", encoding="utf-8") as f:
                    f.write(text + "\n")
            errors = check(d, layers=TUNER_LAYERS, one_header=set(TUNER_LAYERS), verbs=False)[0]
        ok = not errors if want is None else any(want in e for e in errors)
        print(f"check_layers self-test {name}: {'ok' if ok else 'WRONG'} {errors}")
        bad += not ok
    # Users of the tuner's headers, and the two plugin folders.
    users_cases = {
        "users clean": ({"tuner-plugin/model/m.h": "", "tools/t.c": '#include "model/m.h"',
                         "profiler-plugin/p.h": '#include "names.h"', "common/names.h": "",
                         "tuner-plugin/measure/r.c": '#include "names.h"'}, None),
        "users bare": ({"tuner-plugin/model/m.h": "", "test/unit/t.c": '#include "m.h"'},
                       "must name its folder"),
        "tuner includes profiler": ({"tuner-plugin/measure/r.c": '#include "prof_format.h"',
                                     "profiler-plugin/prof_format.h": ""}, "of profiler-plugin/"),
        "profiler includes tuner": ({"tuner-plugin/model/cost.h": "",
                                     "profiler-plugin/prof_format.c": '#include "cost.h"'},
                                    "of tuner-plugin/"),
    }
    for name, (tree, want) in users_cases.items():
        with tempfile.TemporaryDirectory() as d:
            for rel, text in tree.items():
                os.makedirs(os.path.join(d, os.path.dirname(rel)), exist_ok=True)
                with open(os.path.join(d, rel), "w", encoding="utf-8") as f:
                    f.write(text + "\n")
            errors = check_tuner_users(d)
        ok = not errors if want is None else any(want in e for e in errors)
        print(f"check_layers self-test {name}: {'ok' if ok else 'WRONG'} {errors}")
        bad += not ok
    cm = ("add_library(rail_net_wire_core STATIC ${N}/wire/a.c)\n"
          "set(X_SRC ${N}/protocol/b.c ${N}/protocol/c.c)\n"
          "add_library(rail_net_protocol_core STATIC ${X_SRC})\n"
          "add_library(rail_net_protocol STATIC ${N}/protocol/d.c)\n")
    ok = core_sources(cm) == {"wire/a.c", "protocol/b.c", "protocol/c.c"}
    print(f"check_layers self-test core_sources: {'ok' if ok else 'WRONG'} {core_sources(cm)}")
    bad += not ok
    # A folder cycle cannot exist without an upward include, but the search itself is checked.
    ok = find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) is not None and \
        find_cycle({"a": {"b"}, "b": {"c"}}) is None
    print(f"check_layers self-test find_cycle: {'ok' if ok else 'WRONG'}")
    bad += not ok
    return 1 if bad else 0


def main_tuner(src):
    root = os.path.join(src, "tuner-plugin")
    errors, files, folders = check(root, layers=TUNER_LAYERS, one_header=set(TUNER_LAYERS),
                                   verbs=False)
    errors = ["tuner-plugin/" + e for e in errors] + check_tuner_users(src)
    for e in errors:
        print("check_layers: " + e)
    edges = ", ".join(f"{a}->{b}" for a in TUNER_LAYERS for b in sorted(folders.get(a, ())))
    print(f"check_layers: tuner, {len(files)} files, folder edges: {edges or 'none'}")
    print(f"check_layers: tuner {'FAILED' if errors else 'ok'} ({len(errors)} finding(s))")
    return 1 if errors else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if sys.argv[1:2] == ["--tuner"]:
        return main_tuner(sys.argv[2] if len(sys.argv) > 2
                          else os.path.join(os.path.dirname(__file__), ".."))
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    root = os.path.join(src, "net-plugin")
    with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as f:
        pure = core_sources(f.read())
    if not any(p.startswith("protocol/") for p in pure):
        print("check_layers: no protocol core found in net-plugin/CMakeLists.txt")
        return 1
    errors, files, folders = check(root, pure)
    for e in errors:
        print("check_layers: " + e)
    edges = ", ".join(f"{a}->{b}" for a in LAYERS for b in sorted(folders.get(a, ())))
    print(f"check_layers: {len(files)} files, folder edges: {edges or 'none'}")
    print(f"check_layers: pure cores ({len(pure)}, no verbs reached): {' '.join(sorted(pure))}")
    print(f"check_layers: {'FAILED' if errors else 'ok'} ({len(errors)} finding(s))")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
