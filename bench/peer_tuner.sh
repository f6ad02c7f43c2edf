#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# This tuner (leave one system out), NCCL 2.28.9's default and a peer tuner plugin on the
# project's P5/P5en measurements (test/fixtures/tuner-data; bench/peer_tuner.c).
# usage: bench/peer_tuner.sh [--build DIR] [--peer LIB.so] [--hwloc-xml FILE] [--product NAME]
#                            [peer_tuner options: --check, --verbose, --systems PREFIX]
#   --peer LIB.so: for example aws-ofi-nccl's libnccl-ofi-tuner.so (built outside the tree:
#       bench/README.md); without it only this tuner and NCCL's default are printed.
#   aws-ofi-nccl's tuner acts only where it believes it runs on a P5/P5en/P6 instance: the
#   product name (--product, default p5.48xlarge: OFI_NCCL_FORCE_PRODUCT_NAME) and a topology
#   with an EFA device (--hwloc-xml FILE, an hwloc XML export of an EFA instance: HWLOC_XMLFILE;
#   for example test/fixtures/hwloc-xml/mpibind_aws-g4dn-metal_8xT4_efa.xml).
set -euo pipefail
build=build peer="" xml="" product=p5.48xlarge
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --peer) peer=$2; shift 2 ;;
    --hwloc-xml) xml=$2; shift 2 ;;
    --product) product=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
bin="$build/bench/peer_tuner"
if [ ! -x "$bin" ]; then
  echo "peer_tuner.sh: $bin not found; build first (bash scripts/build.sh $build)" >&2
  exit 2
fi
if [ -z "$peer" ]; then
  exec "$bin" "${args[@]}"
fi
if [ -z "$xml" ] || [ ! -f "$xml" ]; then
  echo "peer_tuner.sh: --hwloc-xml FILE (an hwloc XML of an EFA instance) is needed with --peer" >&2
  exit 2
fi
OFI_NCCL_FORCE_PRODUCT_NAME=$product HWLOC_XMLFILE=$xml HWLOC_THISSYSTEM=1 \
  exec "$bin" --peer "$peer" "${args[@]}"
