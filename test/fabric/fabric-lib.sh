# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash disable=SC2034 # the variables set here are the callers'
# fabric-lib.sh - what run-in-vm.sh (one VM) and run-two-hosts.sh (two VMs) share.
# Sourced, not run. The caller sets HERE (this directory) and FABRIC_DIR (absolute), and
# defines fail STATUS MESSAGE.

# The guest kernel and qemu must be there; (re)builds the initramfs when one of its inputs is
# newer. Sets KERNEL and INITRD.
fabric_prepare() {
  KERNEL=$FABRIC_DIR/kernel/vmlinuz
  [ -e "$KERNEL" ] || fail 122 "no guest kernel in $FABRIC_DIR/kernel: run test/fabric/setup-host.sh"
  command -v qemu-system-x86_64 >/dev/null || fail 122 "qemu-system-x86_64 missing: run test/fabric/setup-host.sh"
  INITRD=$FABRIC_DIR/initramfs.cpio.gz
  local stale=0 input
  [ -f "$INITRD" ] || stale=1
  for input in "$HERE/guest-init.sh" "$HERE/build-initramfs.sh" "$KERNEL" /usr/sbin/ip /usr/bin/rdma /bin/busybox; do
    [ "$stale" = 1 ] || [ ! "$input" -nt "$INITRD" ] || stale=1
  done
  if [ "$stale" = 1 ]; then
    FABRIC_DIR=$FABRIC_DIR bash "$HERE/build-initramfs.sh" "$INITRD" >&2 ||
      fail 122 "building the initramfs failed"
  fi
  mkdir -p "$FABRIC_DIR/jobs" "$FABRIC_DIR/logs"
}

# fabric_write_job JOBFILE COMMAND [ARG...]: the job script the guest runs: the caller's
# exported environment (less what describes the host shell or what the guest sets), cd to the
# current directory, exec COMMAND.
fabric_write_job() {
  local job=$1 name
  shift
  {
    echo "# generated for: $*"
    for name in $(compgen -e); do
      case $name in
      PWD | OLDPWD | SHLVL | _ | SHELLOPTS | BASHOPTS | FABRIC_VM | FABRIC_[ADGI]*[0-9]) continue ;;
      FABRIC_MODE | FABRIC_HOST | FABRIC_PEER_* | FABRIC_MGMT* | FABRIC_IFM) continue ;;
      esac
      printf 'export %s=%q\n' "$name" "${!name}"
    done
    printf 'cd %q || exit 126\n' "$(pwd -P)"
    printf 'exec'
    printf ' %q' "$@"
    printf '\n'
  } >"$job"
}

# Sets ACCEL and ACCEL_ARGS from FABRIC_ACCEL, or picks kvm only when /dev/kvm is writable and a
# stock kvm_intel/kvm_amd module drives it (a para-virtual variant, seen: kvm_pvm, cannot boot
# a stock kernel).
fabric_accel() {
  ACCEL=${FABRIC_ACCEL:-}
  if [ -z "$ACCEL" ]; then
    if [ -w /dev/kvm ] && { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; }; then
      ACCEL=kvm
    else
      ACCEL=tcg
    fi
  fi
  # shellcheck disable=SC2054 # the commas are qemu's
  case $ACCEL in
  kvm) ACCEL_ARGS=(-accel kvm -cpu host) ;;
  tcg) ACCEL_ARGS=(-accel tcg,thread=multi -cpu max) ;;
  *) fail 121 "FABRIC_ACCEL must be tcg or kvm, got '$ACCEL'" ;;
  esac
}

# fabric_status CONSOLE: the FABRIC_EXIT status the guest printed, or nothing.
fabric_status() {
  tr -d '\r' <"$1" | grep -ao 'FABRIC_EXIT=[0-9]*' | tail -1 | cut -d= -f2
}

# fabric_console_tail CONSOLE
fabric_console_tail() {
  echo "--- last lines of the guest console ($1) ---" >&2
  tr -d '\r' <"$1" | tail -n 40 >&2
}
