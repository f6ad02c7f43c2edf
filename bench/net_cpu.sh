#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC2086 # $sizes, $rails_list split on purpose
# Instructions a net plugin executes per message, counted by callgrind (repeatable, unlike wall
# time): build/bench/netcost holds both ends in one process and runs, per size, cycles of
# irecv + isend + tests until both are done, one message in flight, host memory; callgrind
# collects only inside the plugin calls and dumps once per size. Per message this prints
#   plugin       instructions in the plugin's own code (its .so; on the shm provider less the
#                provider's functions (transport/shm_*.c), which stand in for libibverbs + NIC)
#   +libc        plugin plus what it ran in libc (memcpy of eager data, clocks, locks)
#   provider     the verbs provider's user-space code: the shm provider's files, or libibverbs
#                and its driver library (librxe under SoftRoCE); the kernel is not counted
#   tests        test() calls per message, and those that found nothing (idle)
#   less idle    (VM only) plugin instructions less idle tests x the cost of one idle test
#                (measured in the same run on a receive nothing was sent to): the work of the
#                message without the polls spent waiting for rxe. Not on shm: there the provider
#                moves data inside test(), so a test that does not finish its request still works
# Runs:
#   on the host:   bash bench/net_cpu.sh [--build DIR]       (NCCL_RAIL_VERBS_PROVIDER=shm,
#                  shm0 -> shm1, and shm0+shm2 -> shm1+shm3 for two rails; deterministic)
#   in the VM:     bash test/fabric/run-in-vm.sh --timeout 900 -- bash bench/net_cpu.sh \
#                    --peer /path/libnccl-net.so            (rxe0 -> rxe1, rxe0+rxe2 ->
#                  rxe1+rxe3; the peer's two-rail device through its makeVDevice; idle polls
#                  pause --idle-sleep 200 us, doubling to 16x, so that rxe's kernel work runs)
# Options: --build DIR (build; also $RAIL_BUILD_DIR)  --plugin SO (BUILD/libnccl-net-rail.so)
#          --peer SO (in the VM only)  --sizes B,B,.. (8,65536,524288,4194304)  --iters N (50)
#          --warmup N (10)  --rails "1 2"  --idle-sleep US (0 on shm, 200 in the VM)
#          --top N (print the N costliest plugin functions per size; 0)  --keep DIR (keep dumps)
#          --split 1 (also plugin instructions per message by call: isend, irecv, tests of the
#          send, tests of the receive; four more runs per plugin and rail count; 0)
#          --ar auto|0|1 (NCCL_IB_ADAPTIVE_ROUTING on shm; default 0, as on the VM's RoCE rails
#          where the peer is measured: shm's ports say InfiniBand, where auto turns it on and a
#          message above NCCL_IB_AR_THRESHOLD goes as a plain write plus a size record)
# Figures only: nothing is asserted about them. Exit 1 when a run failed or a byte differed.
set -uo pipefail
build=${RAIL_BUILD_DIR:-build} plugin='' peer=${PEER_PLUGIN:-} sizes=8,65536,524288,4194304
iters=50 warmup=10 rails_list="1 2" idle_sleep='' top=0 keep='' split=0 ar=''
while [ $# -gt 0 ]; do
  case $1 in
  --build) build=$2 ;;
  --plugin) plugin=$2 ;;
  --peer) peer=$2 ;;
  --sizes) sizes=$2 ;;
  --iters) iters=$2 ;;
  --warmup) warmup=$2 ;;
  --rails) rails_list=$2 ;;
  --idle-sleep) idle_sleep=$2 ;;
  --top) top=$2 ;;
  --keep) keep=$2 ;;
  --split) split=$2 ;;
  --ar) ar=$2 ;;
  *)
    sed -n '3,32p' "$0"
    exit 2
    ;;
  esac
  shift 2 || exit 2
done
plugin=${plugin:-$build/libnccl-net-rail.so}
for f in "$build/bench/netcost" "$plugin" ${peer:+"$peer"}; do
  [ -f "$f" ] || {
    echo "net_cpu: $f not found (bash scripts/build.sh $build)" >&2
    exit 1
  }
done
command -v valgrind >/dev/null || {
  echo "net_cpu: valgrind not found (scripts/install-deps.sh installs it)" >&2
  exit 1
}
plugin=$(readlink -f "$plugin")
[ -n "$peer" ] && peer=$(readlink -f "$peer")
out=${keep:-$(mktemp -d)}
mkdir -p "$out"
[ -n "$keep" ] || trap 'rm -rf "$out"' EXIT

if [ "${FABRIC_VM:-}" = 1 ]; then
  where=vm d0=${FABRIC_DEV0:-rxe0} d1=${FABRIC_DEV1:-rxe1} d2=${FABRIC_DEV2:-rxe2} d3=${FABRIC_DEV3:-rxe3}
  idle_sleep=${idle_sleep:-200}
  export NCCL_IB_GID_INDEX=${FABRIC_G0:-1} # the peer picks RoCE v2 GIDs itself; pin it anyway
else
  where=shm d0=shm0 d1=shm1 d2=shm2 d3=shm3
  idle_sleep=${idle_sleep:-0}
  [ -n "$peer" ] && echo "net_cpu: --peer is measured in the VM only (shm is this plugin's provider)" >&2 && peer=''
  export NCCL_RAIL_VERBS_PROVIDER=shm NCCL_RAIL_SHM_FABRIC=netcost-$$
  # shm's ports say InfiniBand (adaptive routing on under auto); the peer is measured on RoCE.
  ar=${ar:-0}
fi

# Sums one callgrind dump's self costs by category: the plugin's own code, its shm provider
# files, libc, the verbs library and its driver, everything else (the driver, ld.so).
sum_dump() { # plugin.so dump -> "plugin provider libc verbs other"
  awk -v so="$1" '
    function nm(s, kind,   id, rest) {
      if (match(s, /^\([0-9]+\)/)) {
        id = substr(s, 2, RLENGTH - 2); rest = substr(s, RLENGTH + 2)
        if (rest != "") N[kind, id] = rest
        return N[kind, id]
      }
      return s
    }
    /^ob=/ { ob = nm(substr($0, 4), "o"); next }
    /^cob=/ { nm(substr($0, 5), "o"); next }
    /^fl=/ { fl = nm(substr($0, 4), "f"); next }
    /^f[ie]=/ { nm(substr($0, 4), "f"); next }
    /^cf[il]=/ { nm(substr($0, 5), "f"); next }
    /^fn=/ { nm(substr($0, 4), "n"); next }
    /^cfn=/ { nm(substr($0, 5), "n"); next }
    /^calls=/ { skip = 1; next }
    /^[0-9+*-]/ {
      if (skip) { skip = 0; next }
      # The provider by its functions (fl: the file of the function), with what they inlined.
      if (ob == so) { if (fl ~ /transport\/shm_[a-z_]+\.c$/) prov += $2; else own += $2 }
      else if (ob ~ /\/libc[.-][^\/]*$/) libc += $2
      else if (ob ~ /\/(libibverbs|lib[a-z0-9]+-rdmav[0-9]+)[^\/]*$/) verbs += $2
      else other += $2
    }
    END { printf "%d %d %d %d %d\n", own, prov, libc, verbs, other }' "$2"
}

top_fns() { # plugin.so dump n -> the n costliest functions of the plugin object (self)
  callgrind_annotate --inclusive=no --threshold=100 "$2" 2>/dev/null |
    awk -v so="$1" 'index($0, "[" so "]") {print "      " $0}' | head -n "$3"
}

fail=0 split_kind=''
declare -A R=() # R[plugin,rails,size] = "plugin +libc provider tests idle less-idle"
measure() { # label so rails sdev rdev [netcost args...]
  local label=$1 so=$2 rails=$3 sdev=$4 rdev=$5
  shift 5
  local base="$out/cg.$label.$rails$split_kind" log="$out/$label.$rails$split_kind.log" t0=$SECONDS
  rm -f "$base"*
  valgrind --tool=callgrind --callgrind-out-file="$base" --collect-atstart=no \
    "$build/bench/netcost" "$so" --send-dev "$sdev" --recv-dev "$rdev" --sizes "$sizes" \
    --iters "$iters" --warmup "$warmup" --idle 200 --idle-sleep "$idle_sleep" "$@" \
    >"$log" 2>"$log.err"
  local st=$?
  echo "  $label, $rails rail(s)${split_kind:+, $split_kind only}: $((SECONDS - t0)) s under valgrind"
  if [ $st -ne 0 ] || ! grep -q '^netcost idle ' "$log"; then
    echo "net_cpu: $label, $rails rail(s): netcost failed (status $st)" >&2
    tail -5 "$log" "$log.err" >&2
    fail=1
    return
  fi
  # The dumps: one per size, then the idle probe (each named in its desc: line).
  local -a dumps
  # (no process substitution: the fabric VM has no /dev/fd)
  mapfile -t dumps <<<"$(grep -l '^desc: Trigger: Client Request: netcost' "$base".*)"
  local idle_file
  idle_file=$(grep -l '^desc: Trigger: Client Request: netcost idle' "${dumps[@]}")
  local -a iv
  read -r -a iv <<<"$(sum_dump "$so" "$idle_file")"
  local itests
  itests=$(awk '/^netcost idle /{sub(/.*tests=/, ""); print $1 + 0}' "$log")
  local idle_per
  idle_per=$(awk -v a="${iv[0]}" -v n="$itests" 'BEGIN {printf "%.0f", n ? a / n : 0}')
  [ -z "$split_kind" ] && R[$label,$rails,idle]=$idle_per
  for f in "${dumps[@]}"; do
    [ "$f" = "$idle_file" ] && continue
    local size
    size=$(sed -n 's/^desc: Trigger: Client Request: netcost size=\([0-9]*\).*/\1/p' "$f")
    local -a v c
    read -r -a v <<<"$(sum_dump "$so" "$f")"
    read -r -a c <<<"$(awk -v s="$size" '$1 == "netcost" && $2 == "size=" s {
      for (i = 3; i <= NF; i++) {split($i, kv, "="); x[kv[1]] = kv[2]}
      print x["msgs"], x["test_done"] + x["test_idle"], x["test_idle"], x["isend_null"], x["verified"]}' "$log")"
    if [ "${c[4]:-}" != OK ]; then
      echo "net_cpu: $label, $rails rail(s), $size B: not verified" >&2
      fail=1
    fi
    if [ -n "$split_kind" ]; then
      R[$label,$rails,$size,$split_kind]=$(awk -v m="${c[0]}" -v own="${v[0]}" 'BEGIN {printf "%.0f", own / m}')
      continue
    fi
    R[$label,$rails,$size]=$(awk -v m="${c[0]}" -v own="${v[0]}" -v prov="${v[1]}" -v libc="${v[2]}" \
      -v verbs="${v[3]}" -v t="${c[1]}" -v ti="${c[2]}" -v ip="$idle_per" -v sh="$where" 'BEGIN {
        p = sh == "shm" ? prov : verbs
        less = sh == "shm" ? "-" : sprintf("%.0f", (own - ti * ip) / m)
        printf "%.0f %.0f %.0f %.1f %.1f %s", own / m, (own + libc) / m, p / m, t / m, ti / m, less}')
    if [ "$top" -gt 0 ]; then
      echo "  $label, $rails rail(s), $size B: costliest plugin functions (self, all $iters messages)"
      top_fns "$so" "$f" "$top"
    fi
  done
}

IFS=, read -r -a size_arr <<<"$sizes"
echo "net_cpu: $where, $iters messages per size after $warmup, one in flight, host memory," \
  "sizes $sizes, idle pause ${idle_sleep} us"
echo "  ours $plugin"
if [ -n "$ar" ]; then
  if [ "$ar" = auto ]; then unset NCCL_IB_ADAPTIVE_ROUTING; else export NCCL_IB_ADAPTIVE_ROUTING=$ar; fi
  echo "  adaptive routing: NCCL_IB_ADAPTIVE_ROUTING=${NCCL_IB_ADAPTIVE_ROUTING:-auto} (--ar)"
fi
[ -n "$peer" ] && echo "  peer $peer"
for rails in $rails_list; do
  if [ "$rails" = 1 ]; then
    s=$d0 r=$d1 groups="$d0,$d1,$d2,$d3"
  else
    s="$d0+$d2" r="$d1+$d3" groups="$d0+$d2,$d1+$d3"
  fi
  NCCL_RAIL_RAILS=$groups measure ours "$plugin" "$rails" "$s" "$r"
  # The peer WARNs with a char where its format says %s for devices without a PCI path.
  [ -n "$peer" ] && NCCL_PLUGIN_P2P=ib measure peer "$peer" "$rails" "$s" "$r" --log-raw
  if [ "$split" = 1 ]; then
    for split_kind in isend irecv stest rtest; do
      NCCL_RAIL_RAILS=$groups measure ours "$plugin" "$rails" "$s" "$r" --collect $split_kind
      [ -n "$peer" ] && NCCL_PLUGIN_P2P=ib measure peer "$peer" "$rails" "$s" "$r" --log-raw \
        --collect $split_kind
    done
    split_kind=''
  fi
done

echo "== instructions per message (isend + irecv + tests until both are done; callgrind Ir)"
echo "| plugin | rails | size | plugin | +libc | provider | tests (idle) | less idle tests |"
echo "|---|---|---|---|---|---|---|---|"
for label in ours ${peer:+peer}; do
  for rails in $rails_list; do
    for size in "${size_arr[@]}"; do
      read -r -a x <<<"${R[$label,$rails,$size]:-n/a n/a n/a n/a n/a n/a}"
      echo "| $label | $rails | $size | ${x[0]} | ${x[1]} | ${x[2]} | ${x[3]} (${x[4]}) | ${x[5]} |"
    done
  done
done
for label in ours ${peer:+peer}; do
  for rails in $rails_list; do
    echo "  $label, $rails rail(s): one idle test ${R[$label,$rails,idle]:-n/a} plugin instructions"
  done
done
if [ "$split" = 1 ]; then
  echo "== plugin instructions per message by call (each kind collected alone; sum = the plugin column up to idle-poll timing)"
  echo "| plugin | rails | size | isend | irecv | tests of the send | tests of the receive |"
  echo "|---|---|---|---|---|---|---|"
  for label in ours ${peer:+peer}; do
    for rails in $rails_list; do
      for size in "${size_arr[@]}"; do
        echo "| $label | $rails | $size | ${R[$label,$rails,$size,isend]:-n/a} | ${R[$label,$rails,$size,irecv]:-n/a} | ${R[$label,$rails,$size,stest]:-n/a} | ${R[$label,$rails,$size,rtest]:-n/a} |"
      done
    done
  done
fi
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "n/a"}'; }
col() { read -r -a x <<<"${R[$1]:-}" && echo "${x[$2]:-}"; }
if [[ " $rails_list " == *" 1 "* && " $rails_list " == *" 2 "* ]]; then
  echo "== two rails ÷ one rail (plugin instructions; less idle tests in brackets)"
  for label in ours ${peer:+peer}; do
    line="  $label:"
    for size in "${size_arr[@]}"; do
      line+=" $size B $(ratio "$(col "$label,2,$size" 0)" "$(col "$label,1,$size" 0)")"
      line+=" ($(ratio "$(col "$label,2,$size" 5)" "$(col "$label,1,$size" 5)"))"
    done
    echo "$line"
  done
fi
if [ -n "$peer" ]; then
  echo "== ours ÷ peer (plugin instructions; less idle tests in brackets)"
  for rails in $rails_list; do
    line="  $rails rail(s):"
    for size in "${size_arr[@]}"; do
      line+=" $size B $(ratio "$(col "ours,$rails,$size" 0)" "$(col "peer,$rails,$size" 0)")"
      line+=" ($(ratio "$(col "ours,$rails,$size" 5)" "$(col "peer,$rails,$size" 5)"))"
    done
    echo "$line"
  done
fi
echo "net_cpu: $([ $fail = 0 ] && echo ok || echo FAILED)"
[ $fail = 0 ]
