#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Symbol-export check: the plugin libraries export exactly the NCCL plugin symbols, nothing else,
# and each records exactly the libraries it uses (NEEDED, linked with --as-needed): the expected
# list, and for every entry at least one symbol the plugin really takes from it.
set -u
build=${1:?usage: check_exports.sh BUILD_DIR}
fail=0 pass=0
same_list() { # what got want: the two sorted lists must be equal
  if [ "$2" = "$3" ]; then
    pass=$((pass + 1))
  else
    echo "$1 differ from the expected list:"
    diff <(echo "$3") <(echo "$2") | sed 's/^/  /'
    fail=$((fail + 1))
  fi
}
check_lib() { # lib expected-symbols...
  local lib=$1; shift
  if [ ! -f "$lib" ]; then echo "missing $lib"; fail=$((fail + 1)); return; fi
  local got want
  got=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^$' | sort)
  want=$(printf '%s\n' "$@" | sort)
  same_list "$lib exports" "$got" "$want"
  # No CUDA link: the driver is dlopen'ed at run time (common/cuda_drv.c).
  if readelf -d "$lib" | grep -E 'NEEDED.*lib(cuda|cudart)' >/dev/null; then
    echo "$lib links CUDA:"; readelf -d "$lib" | grep NEEDED | sed 's/^/  /'
    fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
  # Data objects, not functions (NCCL dlsym's struct objects).
  for s in "$@"; do
    t=$(nm -D --defined-only "$lib" | awk -v s="$s" '$3==s{print $2}')
    case "$t" in D|R|d|r|V) pass=$((pass + 1)) ;; *) echo "$s in $lib has nm type '$t', want data"; fail=$((fail + 1)) ;; esac
  done
}
# check_needed lib expected-base-names...: NEEDED without the .so.N suffix (sanitizer runtimes of
# an ASan build aside) must be exactly the list, each one providing a symbol the plugin imports.
check_needed() {
  local lib=$1; shift
  [ -f "$lib" ] || return
  local got want
  got=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -Ev '^lib(asan|ubsan)\.' |
        sed 's/\.so.*$//' | sort)
  want=$(printf '%s\n' "$@" | sort)
  same_list "$lib NEEDED entries" "$got" "$want"
  local imports dep path
  imports=$(nm -D --undefined-only "$lib" | awk '{print $2}' | sed 's/@.*//' | sort -u)
  for dep in $(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    path=$(ldd "$lib" | awk -v d="$dep" '$1==d{print $3}')
    if [ -z "$path" ] || [ ! -f "$path" ]; then
      echo "$lib: cannot resolve $dep"; fail=$((fail + 1)); continue
    fi
    if comm -12 <(echo "$imports") <(nm -D --defined-only "$path" | awk '{print $3}' | sed 's/@.*//' | sort -u) |
       grep -q .; then
      pass=$((pass + 1))
    else
      echo "$lib records $dep but takes no symbol from it"; fail=$((fail + 1))
    fi
  done
}
TUNER="ncclTunerPlugin_v2 ncclTunerPlugin_v3 ncclTunerPlugin_v4 ncclTunerPlugin_v5 ncclTunerPlugin_v6 ncclTunerPlugin_v7"
# Both libraries carry the profiler (NCCL 2.28 looks for v5, 2.29 and 2.30 for v6 first, 2.31 and
# 2.32 for v7 first).
PROF="ncclProfiler_v5 ncclProfiler_v6 ncclProfiler_v7"
# shellcheck disable=SC2086
check_lib "$build/libnccl-tuner-rail.so" $TUNER $PROF
# The tuner: topology XML (libxml2), hwloc, libm for the cost model; no verbs, no json-c.
check_needed "$build/libnccl-tuner-rail.so" libc libhwloc libm libxml2
if [ -f "$build/libnccl-net-rail.so" ]; then
  NET="ncclNetPlugin_v6 ncclNetPlugin_v7 ncclNetPlugin_v8 ncclNetPlugin_v9 ncclNetPlugin_v10 ncclNetPlugin_v11 ncclNetPlugin_v12"
  # shellcheck disable=SC2086
  check_lib "$build/libnccl-net-rail.so" $TUNER $PROF $NET
  # The net plugin adds json-c (the NCCL_RAIL_STATS_FILE telemetry snapshots); libibverbs is
  # dlopen'ed at init (NCCL_IBVERBS_LIB, net-plugin/transport/verbs_lib.c), never linked.
  check_needed "$build/libnccl-net-rail.so" libc libhwloc libjson-c libm libxml2
fi
# Nothing the project builds records libibverbs: the plugin loads on a node without rdma-core
# and declines there with one WARN; the CLI (doctor) loads it the same way.
for f in "$build/libnccl-net-rail.so" "$build/libnccl-tuner-rail.so" "$build/tools/nccl-rail"; do
  [ -f "$f" ] || continue
  if readelf -d "$f" | grep -E 'NEEDED.*libibverbs' >/dev/null; then
    echo "$f records libibverbs (NEEDED): it must be loaded at run time (NCCL_IBVERBS_LIB)"
    fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
done
echo "symbol_exports: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
