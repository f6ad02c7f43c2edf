#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Per-connection cost of the net plugin at 1 .. 4096 connections (bench/scale.c), on the shm verbs
# provider, no VM: one table row per run (figures per connection, send and receive side together).
#   bash bench/scale.sh [--build DIR] [--quick] [--max N]
# --quick: N = 1, 64 only (a minute); --max N: largest connection count (default 1024: the shm
# provider holds 4,096 QPs and 8,192 memory regions per device context, see bench/README.md).
# Rows: two processes, N connections from one to the other, one or two rails, 1 or 4 QPs per
# connection; then an all-to-all among 8 processes with 64 connections per ordered pair.
# Columns: resident memory after setup and after one 4 KiB + one 256 KiB message on each,
# registered memory (the plugin's own regions), QPs and CQs, setup wall and CPU time (both
# processes, their polling included) and page faults during the setup, one
# test() with every comm idle, one 8-byte isend/irecv/test cycle (CPU time), heap in use, and
# heap left after closing everything (all processes; the shm provider keeps a 12 KiB receive
# ring per QP slot it ever used). Figures only (bench/README.md, "Scale"); exit status 1 when a
# run failed. On kernel verbs next to a peer plugin (in the VM): bench/scale_peer.sh, i.e.
#   scale --provider verbs --devs rxe0,rxe1 [--plugin SO] [--smaps]
set -uo pipefail
build=${RAIL_BUILD_DIR:-build} max=1024 quick=0
while [ $# -gt 0 ]; do
  case $1 in
  --build) build=$2; shift ;;
  --max) max=$2; shift ;;
  --quick) quick=1 ;;
  *) sed -n "2,17p" "$0"; exit 2 ;;
  esac
  shift
done
bin=$build/bench/scale
[ -x "$bin" ] || { echo "scale.sh: $bin missing: cmake --build $build --target scale"; exit 1; }
ns="1 64 512 4096"
[ "$quick" = 1 ] && ns="1 64"
fail=0
printf '%-26s %8s %8s %8s %6s %6s %8s %8s %7s %8s %8s %8s %9s\n' run "rss KiB" "+traffic" "reg KiB" QPs CQs \
  "setup ms" "cpu ms" faults "test ns" "cycle us" "heap KiB" "closed KiB"
row() { # label, then scale's arguments
  local label=$1 out
  shift
  if ! out=$("$bin" "$@" 2>/tmp/scale-$$.err); then
    echo "$label: FAILED"; tail -5 /tmp/scale-$$.err; fail=1; return
  fi
  echo "$out" | awk -v l="$label" '
    function v(k,  i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
    /per_conn rss_kib=/ { rss = v("rss_kib"); rt = v("rss_traffic_kib"); heap = v("heap_traffic_kib") }
    /per_conn qps=/ { qps = v("qps"); cqs = v("cqs"); reg = v("reg_kib") }
    /per_conn setup_ms=/ { setup = v("setup_ms"); cpu = v("setup_cpu_ms") }
    /per_conn setup_user_ms=/ { flt = v("setup_faults") }
    /idle test_ns=/ { tns = v("test_ns"); cyc = v("cycle_us") }
    /closed heap_kib=/ { closed = v("heap_kib") }
    END { printf "%-26s %8s %8s %8s %6s %6s %8s %8s %7s %8s %8s %8s %9s\n", l, rss, rt, reg, qps, cqs, setup, cpu, flt, tns, cyc, heap, closed }'
  rm -f /tmp/scale-$$.err
}
for rails in 1 2; do
  for qps in 1 4; do
    for n in $ns; do
      [ "$n" -gt "$max" ] && continue
      # Two rails x 4 QPs at 4096 connections needs ~40k QPs per process: left out.
      [ "$n" = 4096 ] && [ "$rails" = 2 ] && [ "$qps" = 4 ] && continue
      row "pairs N=$n rails=$rails qps=$qps" --conns "$n" --rails "$rails" --qps "$qps"
    done
  done
done
[ "$quick" = 1 ] || row "all-to-all 8x64 rails=1" --procs 8 --conns 64 --msgs 500
exit $fail
