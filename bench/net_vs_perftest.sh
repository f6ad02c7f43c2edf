#!/usr/bin/env bash
# The net plugin next to perftest on the same devices in the same boot. Runs INSIDE the fabric VM:
#   bash test/fabric/run-in-vm.sh --timeout 1200 -- bash bench/net_vs_perftest.sh [options]
# Each round measures, in alternating order (odd rounds perftest first, even rounds netbench
# first):
#   bandwidth  ib_write_bw -s 4194304 -t 8 (8 writes outstanding) and netbench --test bw
#              (4 MiB messages, 8 in flight, irecv n=1), twice: both netbench processes polling
#              without pause, and with the receiving process sleeping 200 us when a poll found
#              nothing (perftest's server is passive: it never polls);
#   latency    ib_write_lat -s 8 (t_typical, the median of round trip / 2) and netbench --test
#              lat (8-byte ping-pong, median of round trip / 2).
# Then the medians over the rounds and the ratios plugin/perftest: of the medians, and the median
# of the per-round ratios. Figures only: nothing about speed is asserted. Exit status 1 when a
# netbench run failed its byte verification or a tool failed to run at all.
#
# Options: --rounds N (5)  --bw-iters N (16)  --lat-iters N (1000)  --build DIR (build; also
#          $RAIL_BUILD_DIR)  --plugin SO (DIR/libnccl-net-rail.so, any NCCL net plugin works)
#          --send-dev / --recv-dev (FABRIC_DEV0 / FABRIC_DEV1)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=5 bw_iters=16 lat_iters=1000
build=${RAIL_BUILD_DIR:-build} plugin=''
sdev=${FABRIC_DEV0:-rxe0} rdev=${FABRIC_DEV1:-rxe1}
while [ $# -gt 0 ]; do
  case $1 in
  --rounds) rounds=$2 ;;
  --bw-iters) bw_iters=$2 ;;
  --lat-iters) lat_iters=$2 ;;
  --build) build=$2 ;;
  --plugin) plugin=$2 ;;
  --send-dev) sdev=$2 ;;
  --recv-dev) rdev=$2 ;;
  *)
    sed -n '2,19p' "$0"
    exit 2
    ;;
  esac
  shift 2 || exit 2
done
case $build in /*) ;; *) build=$root/$build ;; esac
plugin=${plugin:-$build/libnccl-net-rail.so}
nb=$build/bench/netbench
if [ ! -x "$nb" ] || [ ! -f "$plugin" ]; then
  echo "net_vs_perftest: $nb or $plugin missing: build first" >&2
  exit 1
fi
if [ ! -e /dev/infiniband ]; then
  echo "net_vs_perftest: no /dev/infiniband: run me through test/fabric/run-in-vm.sh" >&2
  exit 1
fi
ulimit -l unlimited 2>/dev/null || true
gid_of() { # device name -> the FABRIC_G index of that device, or 1
  local i d
  for i in 0 1 2 3; do
    d=FABRIC_DEV$i
    [ "${!d:-}" = "$1" ] && d=FABRIC_G$i && echo "${!d:-1}" && return
  done
  echo 1
}
addr_of() { # device name -> its FABRIC_A address
  local i d
  for i in 0 1 2 3; do
    d=FABRIC_DEV$i
    [ "${!d:-}" = "$1" ] && d=FABRIC_A$i && echo "${!d}" && return
  done
  echo 127.0.0.1
}
sgid=$(gid_of "$sdev") rgid=$(gid_of "$rdev") raddr=$(addr_of "$rdev")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if grep -q '^RAIL_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "note: $build is a sanitizer build; its figures are slower than a release build"
fi

wait_listen() { # $1 port: until a TCP socket listens on it (builtins only: exec is slow here)
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

port=18700
failed() { echo "$1" >>"$scratch/failed"; } # runs in $(...) subshells: count in a file
perftest() { # $1 tool, $2 size, $3 iterations, $4 port, rest: extra args -> report row
  local tool=$1 size=$2 iters=$3 port=$4 row=''
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
netbench() { # args -> the value of key $1 from netbench's result line
  local key=$1 line val=''
  shift
  "$nb" "$plugin" --send-dev "$sdev" --recv-dev "$rdev" "$@" >"$scratch/nb" 2>&1
  while read -r line; do
    case $line in
    "netbench bw "* | "netbench lat "*)
      val=${line#* "$key"=}
      val=${val%% *}
      ;;
    esac
  done <"$scratch/nb"
  if [ -z "$val" ] || ! grep -q 'verified=OK' "$scratch/nb"; then
    echo "netbench $* failed:" >&2
    tail -n 5 "$scratch/nb" >&2
    failed netbench
    val=''
  fi
  echo "$val"
}

ib_bw() { # $1 port -> BW average
  local -a f
  read -r -a f <<<"$(perftest ib_write_bw 4194304 "$bw_iters" "$1" -t 8)"
  echo "${f[1]:-}"
}
ib_lat() { # $1 port -> t_typical
  local -a f
  read -r -a f <<<"$(perftest ib_write_lat 8 "$lat_iters" "$1")"
  echo "${f[2]:-}"
}
nb_bw() { netbench MBps --test bw --iters "$bw_iters" --warmup 2 --inflight 8 "$@"; }
nb_lat() { netbench median_us --test lat --lat-iters "$lat_iters" --lat-warmup 100; }

median() { # numbers on stdin (blank lines, "inf" and "nan" skipped) -> median or "n/a"
  sort -g | awk '$1 ~ /^[0-9.]+$/ {v[n++] = $1}
    END {if (!n) print "n/a"; else if (n % 2) print v[(n - 1) / 2];
         else printf "%.2f\n", (v[n / 2 - 1] + v[n / 2]) / 2}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0)
  printf "%.2f", a / b; else printf "n/a"}'; }

echo "net_vs_perftest: $rounds rounds, $sdev -> $rdev, plugin $plugin"
echo "  bandwidth: 4194304 B x $bw_iters, 8 outstanding; latency: 8 B x $lat_iters round trips"
declare -a IBW NBW NBS ILAT NLAT
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then
    ibw=$(ib_bw $((port + 2 * r))) nbw=$(nb_bw) nbs=$(nb_bw --recv-sleep 200)
    ilat=$(ib_lat $((port + 2 * r + 1))) nlat=$(nb_lat)
  else
    nbs=$(nb_bw --recv-sleep 200) nbw=$(nb_bw) ibw=$(ib_bw $((port + 2 * r)))
    nlat=$(nb_lat) ilat=$(ib_lat $((port + 2 * r + 1)))
  fi
  IBW+=("$ibw") NBW+=("$nbw") NBS+=("$nbs") ILAT+=("$ilat") NLAT+=("$nlat")
  printf 'round %d: MB/s ib_write_bw %s, netbench %s, netbench recv-sleep %s | one-way us ib_write_lat %s, netbench %s\n' \
    "$r" "${ibw:-?}" "${nbw:-?}" "${nbs:-?}" "${ilat:-?}" "${nlat:-?}"
done

pair_ratios() { # $1 name of the plugin array, $2 name of the perftest array
  local -n a=$1 b=$2
  local i
  for i in "${!a[@]}"; do ratio "${a[$i]}" "${b[$i]}" && echo; done | median
}
m_ibw=$(printf '%s\n' "${IBW[@]}" | median) m_nbw=$(printf '%s\n' "${NBW[@]}" | median)
m_nbs=$(printf '%s\n' "${NBS[@]}" | median)
m_ilat=$(printf '%s\n' "${ILAT[@]}" | median) m_nlat=$(printf '%s\n' "${NLAT[@]}" | median)
echo "medians over $rounds rounds (MB/s = 2^20 B/s, as perftest prints):"
printf '  bandwidth  ib_write_bw %s MB/s | plugin %s MB/s: %sx (per-round median %sx)' \
  "$m_ibw" "$m_nbw" "$(ratio "$m_nbw" "$m_ibw")" "$(pair_ratios NBW IBW)"
printf ' | plugin, receiver sleeping when idle %s MB/s: %sx (per-round %sx)\n' \
  "$m_nbs" "$(ratio "$m_nbs" "$m_ibw")" "$(pair_ratios NBS IBW)"
printf '  latency    ib_write_lat %s us | plugin %s us: %sx (per-round median %sx)\n' \
  "$m_ilat" "$m_nlat" "$(ratio "$m_nlat" "$m_ilat")" "$(pair_ratios NLAT ILAT)"
if [ -s "$scratch/failed" ]; then
  echo "net_vs_perftest: $(wc -l <"$scratch/failed") run(s) failed (see above)"
  exit 1
fi
