# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash disable=SC2154 # sdev, rdev, build, plugin come from the caller
# Shared by bench/net_vs_perftest.sh and bench/net_demo.sh (sourced, inside the fabric VM).
# The caller sets sdev, rdev (device names), build (build tree) and plugin (.so, may be empty),
# then calls lib_setup NAME. Afterwards:
#   perftest TOOL SIZE ITERS PORT [ARGS...]  -> the tool's report row after "#bytes #iterations"
#   nb_run FILE ARGS...                      -> netbench's output in FILE; status 0 when verified
#   nb_get FILE KEY                          -> KEY's value from the bw/lat result line in FILE
#   failed WHAT                              -> counts a failure (usable from $(...) subshells)
#   failures                                 -> how many runs failed
#   raw2_bw A0 A1 B0 B1 ITERS                -> two ib_write_bw at once (one per rail), summed
# Exec is slow in the guest (a 9p root under TCG), so the helpers stick to shell builtins.

lib_setup() { # $1 script name for messages
  local root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  case $build in /*) ;; *) build=$root/$build ;; esac
  plugin=${plugin:-$build/libnccl-net-rail.so}
  nb=$build/bench/netbench
  if [ ! -x "$nb" ] || [ ! -f "$plugin" ]; then
    echo "$1: $nb or $plugin missing: build first" >&2
    exit 1
  fi
  if [ ! -e /dev/infiniband ]; then
    echo "$1: no /dev/infiniband: run me through test/fabric/run-in-vm.sh" >&2
    exit 1
  fi
  ulimit -l unlimited 2>/dev/null || true
  sgid=$(fabric_var G "$sdev" 1) rgid=$(fabric_var G "$rdev" 1)
  raddr=$(fabric_var A "$rdev" 127.0.0.1)
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  if grep -q '^RAIL_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
    echo "note: $build is a sanitizer build: slower than a release build"
  fi
}

fabric_var() { # $1 G|A, $2 device name, $3 default -> FABRIC_<$1><i> of the device
  local i d
  for i in 0 1 2 3; do
    d=FABRIC_DEV$i
    if [ "${!d:-}" = "$2" ]; then
      d=FABRIC_$1$i
      echo "${!d:-$3}"
      return
    fi
  done
  echo "$3"
}

wait_listen() { # $1 port: until a TCP socket listens on it
  local hex n l st
  hex=$(printf '%04X' "$1")
  for ((n = 0; n < 300; n++)); do
    while read -r _ l _ st _; do
      [ "${l##*:}" = "$hex" ] && [ "$st" = 0A ] && return 0
    done </proc/net/tcp
    sleep 0.1
  done
  return 1
}

failed() { echo "$1" >>"$scratch/failed"; }
failures() { if [ -s "$scratch/failed" ]; then wc -l <"$scratch/failed"; else echo 0; fi; }

perftest() {
  local tool=$1 size=$2 iters=$3 port=$4 row='' b n rest
  shift 4
  timeout 300 "$tool" -d "$rdev" -x "$rgid" -F -s "$size" -n "$iters" -p "$port" "$@" \
    >"$scratch/srv" 2>&1 &
  local srv=$!
  if wait_listen "$port"; then
    timeout 300 "$tool" -d "$sdev" -x "$sgid" -F -s "$size" -n "$iters" -p "$port" "$@" \
      "$raddr" >"$scratch/cli" 2>&1
  fi
  wait "$srv"
  while read -r b n rest; do
    [ "$b" = "$size" ] && [ "$n" = "$iters" ] && row="$rest"
  done <"$scratch/cli"
  if [ -z "$row" ]; then
    echo "$tool failed:" >&2
    tail -n 5 "$scratch/cli" "$scratch/srv" >&2
    failed "$tool"
  fi
  echo "$row"
}

nb_run() {
  local out=$1
  shift
  if "$nb" "$plugin" --send-dev "$sdev" --recv-dev "$rdev" "$@" >"$out" 2>&1 &&
    grep -q 'verified=OK' "$out"; then
    return 0
  fi
  echo "netbench $* failed:" >&2
  tail -n 5 "$out" >&2
  failed netbench
  return 1
}

nb_get() {
  local line val=''
  while read -r line; do
    case $line in
    "netbench bw "* | "netbench lat "*)
      case " $line " in *" $2="*)
        val=${line#* "$2"=}
        val=${val%% *}
        ;;
      esac
      ;;
    esac
  done <"$1"
  echo "$val"
}

raw2_bw() { # A0 A1 B0 B1 ITERS -> the sum of two 4 MiB ib_write_bw averages run at once, A0->A1 and
  # B0->B1 (one per rail: the emulator's two-rail ceiling); nothing (and a failure counted) when
  # either run failed. Uses and advances the caller's $port.
  local a0=$1 a1=$2 b0=$3 b1=$4 iters=$5 p1=$port p2=$((port + 1)) g sa sb f1 f2
  local sum=0 b n avg rest got=0 f
  port=$((port + 2))
  g=$(fabric_var G "$a1" 1)
  timeout 300 ib_write_bw -d "$a1" -x "$g" -F -s 4194304 -n "$iters" -p "$p1" -t 8 \
    >"$scratch/sa" 2>&1 &
  sa=$!
  g=$(fabric_var G "$b1" 1)
  timeout 300 ib_write_bw -d "$b1" -x "$g" -F -s 4194304 -n "$iters" -p "$p2" -t 8 \
    >"$scratch/sb" 2>&1 &
  sb=$!
  wait_listen "$p1" && wait_listen "$p2"
  g=$(fabric_var G "$a0" 1)
  timeout 300 ib_write_bw -d "$a0" -x "$g" -F -s 4194304 -n "$iters" -p "$p1" -t 8 \
    "$(fabric_var A "$a1" 127.0.0.1)" >"$scratch/ca" 2>&1 &
  f1=$!
  g=$(fabric_var G "$b0" 1)
  timeout 300 ib_write_bw -d "$b0" -x "$g" -F -s 4194304 -n "$iters" -p "$p2" -t 8 \
    "$(fabric_var A "$b1" 127.0.0.1)" >"$scratch/cb" 2>&1 &
  f2=$!
  wait "$f1" "$f2" "$sa" "$sb"
  for f in "$scratch/ca" "$scratch/cb"; do
    while read -r b n _ avg rest; do
      if [ "$b" = 4194304 ] && [ "$n" = "$iters" ]; then
        sum=$(awk -v s="$sum" -v a="$avg" 'BEGIN { printf "%.2f", s + a }')
        got=$((got + 1))
      fi
    done <"$f"
  done
  if [ "$got" -ne 2 ]; then
    echo "raw2: ib_write_bw failed:" >&2
    tail -n 3 "$scratch/ca" "$scratch/cb" >&2
    failed ib_write_bw
    return
  fi
  echo "$sum"
}
