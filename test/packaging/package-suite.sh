#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The package suite (scripts/test.sh runs it as root; a few minutes): builds the .deb with
# packaging/build-deb.sh, runs lintian, installs it with dpkg -i, repeats NCCL's plugin lookup
# (test/packaging/probe_plugins.c: bare-name dlopen, no LD_LIBRARY_PATH), runs the installed
# nccl-rail the way docs/deploy.md does, removes it with dpkg -r and checks nothing is left;
# then builds the RPM (packaging/build-rpm.sh) where rpmbuild exists. The machine is left as it
# was: the package is removed even when a step fails.
# Prints "package suite: N passed, M failed"; exit 1 when anything failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
passed=0 failed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }
check() { # description command...
  local what=$1; shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}
tmp=$(mktemp -d)
installed_by_us=0 conf_saved=0 conf_written=0
cleanup() {
  [ "$installed_by_us" -eq 1 ] && dpkg -r nccl-rail >/dev/null 2>&1
  if [ "$conf_written" -eq 1 ]; then
    rm -f /etc/nccl.conf
    [ "$conf_saved" -eq 1 ] && cp -p "$tmp/nccl.conf.saved" /etc/nccl.conf
  fi
  rm -rf "$tmp" /tmp/nccl-rail-deb
}
trap cleanup EXIT

version=$(sed -n 's/^project(nccl-rail VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
deb="/tmp/nccl-rail-deb/nccl-rail_${version}_${arch}.deb"

if dpkg-query -W -f='${Status}' nccl-rail 2>/dev/null | grep -q "install ok installed"; then
  bad "nccl-rail is already installed on this machine: not touching it"
  echo "package suite: $passed passed, $failed failed"
  exit 1
fi

# ---- build: the builder stage of packaging/Containerfile, the commands of docs/deploy.md ----
# (These command lines are compared verbatim with the Containerfile and docs/deploy.md by
# test/check_deploy_doc.sh: keep them identical.)
rm -rf /tmp/nccl-rail-deb
bash scripts/install-deps.sh >"$tmp/deps.log" 2>&1 || { cat "$tmp/deps.log"; bad "install-deps"; }
if bash packaging/build-deb.sh /tmp/nccl-rail-deb >"$tmp/build.log" 2>&1 && [ -f "$deb" ]; then
  ok "dpkg-buildpackage -us -uc -b built $(basename "$deb")"
else
  tail -30 "$tmp/build.log"
  bad "building nccl-rail_${version}_${arch}.deb"
  echo "package suite: $passed passed, $failed failed"
  exit 1
fi

# ---- lintian: no error (warnings, infos and overrides printed for the record) ----
lintian --fail-on error /tmp/nccl-rail-deb/nccl-rail_*_amd64.deb >"$tmp/lintian.log" 2>&1
lrc=$?
grep -v 'running with root privileges' "$tmp/lintian.log" | sed 's/^/  lintian: /'
check "lintian reports no error" [ "$lrc" -eq 0 ]

# ---- contents ----
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$tmp/contents"
check "plugins in the multiarch libdir /usr/lib/$multiarch" \
  grep -qx "/usr/lib/$multiarch/libnccl-net-rail.so" "$tmp/contents"
check "tuner plugin in the multiarch libdir" \
  grep -qx "/usr/lib/$multiarch/libnccl-tuner-rail.so" "$tmp/contents"
check "no generic libnccl-net.so (or libnccl-tuner.so) in the package" \
  bash -c "! grep -E '/libnccl-(net|tuner)\.so$' '$tmp/contents'"
check "nccl-rail in /usr/bin, nccl-rail(1), bash completion, docs, Slurm prolog" bash -c "
  grep -qx /usr/bin/nccl-rail '$tmp/contents' &&
  grep -qx /usr/share/man/man1/nccl-rail.1.gz '$tmp/contents' &&
  grep -qx /usr/share/bash-completion/completions/nccl-rail '$tmp/contents' &&
  grep -qx /usr/share/doc/nccl-rail/copyright '$tmp/contents' &&
  grep -qx /usr/share/nccl-rail/prolog-nccl-rail.sh '$tmp/contents' &&
  grep -q '^/usr/share/doc/nccl-rail/docs/deploy.md' '$tmp/contents'"
depends=$(dpkg-deb -f "$deb" Depends)
echo "  Depends: $depends"
check "Depends (shlibs, and libibverbs1 the net plugin dlopens) name every library the plugins need" bash -c "
  for p in libc6 libibverbs1 libxml2 libhwloc15 libjson-c5; do
    echo '$depends' | grep -q \"\\b\$p\\b\" || { echo \"  missing \$p\"; exit 1; }; done"
# The Containerfile installs exactly the Depends (libc6 aside) before dpkg -i.
want=$(echo "$depends" | tr ',' '\n' | sed 's/(.*//; s/ //g' | grep -v '^libc6$' | sort | xargs)
got=$(sed -n 's/^RUN apt-get install -y --no-install-recommends //p' packaging/Containerfile | tr ' ' '\n' | sort | xargs)
check "packaging/Containerfile installs the package's Depends ($want)" [ "$want" = "$got" ]

# ---- install: the final stage of packaging/Containerfile ----
apt-get install -y --no-install-recommends libhwloc15 libibverbs1 libjson-c5 libxml2 >"$tmp/apt.log" 2>&1 ||
  { cat "$tmp/apt.log"; bad "apt-get install of the runtime libraries"; }
if dpkg -i /tmp/nccl-rail-deb/nccl-rail_*_amd64.deb >"$tmp/install.log" 2>&1; then
  installed_by_us=1
  ok "dpkg -i $(basename "$deb")"
else
  cat "$tmp/install.log"
  bad "dpkg -i"
fi
dpkg -L nccl-rail 2>/dev/null >"$tmp/files"
if [ -e /etc/nccl.conf ]; then cp -p /etc/nccl.conf "$tmp/nccl.conf.saved" && conf_saved=1; fi
conf_written=1
printf 'NCCL_NET_PLUGIN=rail\nNCCL_TUNER_PLUGIN=rail\n' > /etc/nccl.conf
nccl-rail --version
check "installed nccl-rail --version says $version" \
  bash -c "nccl-rail --version | grep -q '^nccl-rail $version (git '"

# ---- NCCL's lookup, repeated on the installed files ----
cc -std=c11 -Wall -Wextra -Werror -Icommon -o "$tmp/probe_plugins" test/packaging/probe_plugins.c -ldl
check "probe: NCCL's bare-name lookup finds both plugins and their tables" \
  env -u LD_LIBRARY_PATH "$tmp/probe_plugins" "$version" "/usr/lib/$multiarch"
check "man nccl-rail finds the page" bash -c "man -w nccl-rail | grep -q /usr/share/man/man1/nccl-rail.1.gz"

# ---- docs/deploy.md: doctor sees /etc/nccl.conf and the installed plugins; the Slurm prolog ----
env -u NCCL_NET_PLUGIN -u NCCL_TUNER_PLUGIN -u NCCL_CONF_FILE nccl-rail doctor --json >"$tmp/doctor.json"
drc=$?
check "nccl-rail doctor --json: /etc/nccl.conf read, both plugins resolved in /usr/lib/$multiarch" \
  python3 - "$tmp/doctor.json" "$drc" "$version" "/usr/lib/$multiarch" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rc, version, libdir = int(sys.argv[2]), sys.argv[3], sys.argv[4]
f = {(x["id"], x["subject"]): x for x in d["findings"]}
net = f.get(("plugin.net", "libnccl-net-rail.so"))
tuner = f.get(("plugin.tuner", "libnccl-tuner-rail.so"))
conf = f.get(("conf.file", "/etc/nccl.conf"))
libdir = libdir.replace("/usr/lib/", "/lib/")  # /lib/... or /usr/lib/... (merged /usr)
ok = (rc in (0, 1) and d["exit_code"] == rc and d["version"] == version and conf and
      net and net["severity"] == "ok" and libdir + "/libnccl-net-rail.so" in net["message"] and
      tuner and tuner["severity"] == "ok" and libdir + "/libnccl-tuner-rail.so" in tuner["message"])
for x in (conf, net, tuner):
    print("  %s" % (x and "%s %s: %s" % (x["severity"], x["id"], x["message"])))
sys.exit(0 if ok else 1)
PY
export NCCL_RAIL_PROLOG_LOG="$tmp/prolog.json"
bash /usr/share/nccl-rail/prolog-nccl-rail.sh 2>"$tmp/prolog.err"
prc=$?
sed 's/^/  prolog: /' "$tmp/prolog.err"
# This machine has no RDMA device: the health check must fail (drain) and say why.
if [ -d /sys/class/infiniband ] && [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
  check "Slurm prolog ran (exit $prc, RDMA present)" [ "$prc" -le 1 ]
else
  check "Slurm prolog fails without RDMA devices and names rdma.devices" \
    bash -c "[ $prc -eq 1 ] && grep -q 'rdma.devices' '$tmp/prolog.err' && python3 -m json.tool '$tmp/prolog.json' >/dev/null"
fi
unset NCCL_RAIL_PROLOG_LOG

# ---- remove: nothing left ----
rm -rf /tmp/nccl-rail-deb
if dpkg -r nccl-rail >"$tmp/remove.log" 2>&1; then
  installed_by_us=0
  ok "dpkg -r nccl-rail"
else
  cat "$tmp/remove.log"
  bad "dpkg -r nccl-rail"
fi
left=0
while IFS= read -r f; do
  [ -z "$f" ] && continue
  if [ -e "$f" ] && [ ! -d "$f" ]; then echo "  left behind: $f"; left=1; fi
done <"$tmp/files"
for d in /usr/share/doc/nccl-rail /usr/share/nccl-rail /usr/lib/$multiarch/libnccl-net-rail.so; do
  [ -e "$d" ] && { echo "  left behind: $d"; left=1; }
done
check "dpkg -r leaves no file of the package behind" [ "$left" -eq 0 ]
check "after dpkg -r the package is not installed" \
  bash -c "! dpkg-query -W -f='\${Status}' nccl-rail 2>/dev/null | grep -q 'ok installed'"
check "after dpkg -r NCCL's lookup no longer finds the plugins" \
  bash -c "! env -u LD_LIBRARY_PATH '$tmp/probe_plugins' '$version' >/dev/null 2>&1"

# ---- RPM (rpmbuild from Debian's rpm package) ----
if command -v rpmbuild >/dev/null 2>&1; then
  if bash packaging/build-rpm.sh "$tmp/rpm" >"$tmp/rpm.log" 2>&1; then
    ok "rpmbuild -bb packaging/rpm/nccl-rail.spec"
    rpmfile=$(find "$tmp/rpm" -name "nccl-rail-$version-*.rpm" | head -1)
    check "the RPM holds both plugins in %{_libdir} and no generic libnccl-net.so" bash -c "
      l=\$(rpm -qlp '$rpmfile') &&
      echo \"\$l\" | grep -qx /usr/lib64/libnccl-net-rail.so &&
      echo \"\$l\" | grep -qx /usr/lib64/libnccl-tuner-rail.so &&
      ! echo \"\$l\" | grep -E '/libnccl-(net|tuner)\.so$'"
  else
    tail -30 "$tmp/rpm.log"
    bad "rpmbuild -bb packaging/rpm/nccl-rail.spec"
  fi
else
  bad "rpmbuild not found (scripts/install-deps.sh installs the rpm package)"
fi

echo "package suite: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
