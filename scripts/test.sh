#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds and runs every test: unit tests (plain build and ASan+UBSan build, via ctest), the
# package suite (.deb and .rpm), libFuzzer targets for a bounded time (scripts/fuzz.sh), the
# SoftRoCE VM suites (fabric smoke test, net plugin integration on both builds, the short soak),
# then the two-host suite (two VMs: dead peer host, cut rails).
# Installs what it needs. Prints one closing line "N passed, M failed" over every suite.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh || { echo "test: dependency install failed"; exit 1; }

passed=0 failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
run_suite() { # name build-dir cmake-args...
  local name=$1 dir=$2; shift 2
  echo "== $name: build ($dir)"
  if ! bash scripts/build.sh "$dir" "$@"; then
    echo "== $name: BUILD FAILED"; failed=$((failed + 1)); return
  fi
  echo "== $name: ctest"
  (cd "$dir" && ctest --output-on-failure -j2 --timeout 300) 2>&1 | tee "$log"
  # ctest's summary: "NN% tests passed, F tests failed out of T"
  local sum f t
  sum=$(grep -E 'tests failed out of [0-9]+' "$log" | tail -1)
  if [ -z "$sum" ]; then
    echo "== $name: ctest printed no summary"; failed=$((failed + 1)); return
  fi
  f=$(echo "$sum" | sed -E 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1/')
  t=$(echo "$sum" | sed -E 's/.* tests failed out of ([0-9]+).*/\1/')
  passed=$((passed + t - f))
  failed=$((failed + f))
}
run_suite "unit tests" build
# The ASan tree also carries the verbs fault layer (docs/fault-injection.md): its VM run below
# exercises the vf_* scenarios; the plain tree is built as shipped (no fault code).
run_suite "unit tests under ASan+UBSan" build-asan -DRAIL_SANITIZE=ON -DRAIL_FAULT_INJECTION=ON

# The packages: .deb built, linted, installed, probed the way NCCL loads plugins, removed; the RPM
# built (test/packaging/package-suite.sh; needs root for dpkg -i, a few minutes).
echo "== packages: .deb (lintian, dpkg -i, NCCL lookup probe, dpkg -r) and .rpm"
if [ "$(id -u)" -eq 0 ]; then
  timeout 900 bash test/packaging/package-suite.sh 2>&1 | tee "$log"
  sum=$(grep -E '^package suite: [0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  if [ -n "$sum" ]; then
    passed=$((passed + $(echo "$sum" | sed -E 's/package suite: ([0-9]+) passed.*/\1/')))
    failed=$((failed + $(echo "$sum" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
  else
    echo "== packages: the suite printed no result"; failed=$((failed + 1))
  fi
else
  echo "== packages: needs root (dpkg -i)"; failed=$((failed + 1))
fi

# libFuzzer targets (test/fuzz, clang + ASan/UBSan): each parser fuzzed for a bounded time from
# its seeds and regression inputs; one result per target (scripts/fuzz.sh, ~2.5 min in all).
echo "== fuzz: ${RAIL_CI_FUZZ_SECS:-10} s per target"
bash scripts/fuzz.sh "${RAIL_CI_FUZZ_SECS:-10}" 2>&1 | tee "$log"
sum=$(grep -E '^fuzz: [0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
if [ -n "$sum" ]; then
  passed=$((passed + $(echo "$sum" | sed -E 's/fuzz: ([0-9]+) passed.*/\1/')))
  failed=$((failed + $(echo "$sum" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
else
  echo "== fuzz: no result"; failed=$((failed + 1))
fi

# Real RDMA: the SoftRoCE VM (qemu, rdma_rxe, two rails), one boot for every VM suite.
echo "== SoftRoCE fabric: host setup"
if bash test/fabric/setup-host.sh; then
  echo "== SoftRoCE fabric: tests in the VM"
  bash test/fabric/run-in-vm.sh --timeout 2400 -- bash test/vm-tests.sh build build-asan 2>&1 | tee "$log"
  vmrc=${PIPESTATUS[0]}
  sum=$(grep -E '^vm tests: [0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  if [ -n "$sum" ]; then
    passed=$((passed + $(echo "$sum" | sed -E 's/vm tests: ([0-9]+) passed.*/\1/')))
    failed=$((failed + $(echo "$sum" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
    [ "$vmrc" -eq 0 ] || [ "$(echo "$sum" | sed -E 's/.* ([0-9]+) failed.*/\1/')" -gt 0 ] ||
      { echo "== VM exited $vmrc"; failed=$((failed + 1)); }
  else
    echo "== the VM run printed no result (exit $vmrc)"; failed=$((failed + 1))
  fi
  # Two hosts: two VMs linked by qemu socket networks (test/fabric/run-two-hosts.sh).
  echo "== SoftRoCE fabric: two hosts"
  TWO_HOST_TIMEOUT=900 bash test/two-host-tests.sh build 2>&1 | tee "$log"
  sum=$(grep -E '^two-host tests: [0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  if [ -n "$sum" ]; then
    passed=$((passed + $(echo "$sum" | sed -E 's/two-host tests: ([0-9]+) passed.*/\1/')))
    failed=$((failed + $(echo "$sum" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
  else
    echo "== the two-host run printed no result"; failed=$((failed + 1))
  fi
else
  echo "== SoftRoCE fabric: host setup FAILED"; failed=$((failed + 1))
fi
echo "all tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
