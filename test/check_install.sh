#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install check: `DESTDIR=... cmake --install BUILD --prefix /usr` puts every file where
# GNUInstallDirs says (plugins in CMAKE_INSTALL_LIBDIR, the CLI in bin, nccl-rail(1), bash
# completion, docs, the Slurm prolog), nothing outside DESTDIR and never a generic
# libnccl-net.so; the man page and the completion know every subcommand of tools/main.c.
# usage: check_install.sh SOURCE_DIR BUILD_DIR
# ok only counts, so "test && ok || bad" is an if-then-else here.
# shellcheck disable=SC2015
set -u
src=${1:?usage: check_install.sh SOURCE_DIR BUILD_DIR}
build=${2:?}
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$build/CMakeCache.txt")
[ -n "$libdir" ] || libdir=lib
if DESTDIR="$dest" cmake --install "$build" --prefix /usr >"$dest.log" 2>&1; then ok; else cat "$dest.log"; bad "cmake --install"; fi
rm -f "$dest.log"
for f in "usr/$libdir/libnccl-net-rail.so" "usr/$libdir/libnccl-tuner-rail.so" usr/bin/nccl-rail \
         usr/share/man/man1/nccl-rail.1 usr/share/bash-completion/completions/nccl-rail \
         usr/share/doc/nccl-rail/README.md usr/share/doc/nccl-rail/CHANGELOG.md \
         usr/share/doc/nccl-rail/docs/deploy.md usr/share/doc/nccl-rail/docs/compatibility.md \
         usr/share/doc/nccl-rail/docs/doctor.schema.json usr/share/nccl-rail/prolog-nccl-rail.sh; do
  if [ -f "$dest/$f" ]; then ok; else bad "not installed: /$f"; fi
done
[ -x "$dest/usr/share/nccl-rail/prolog-nccl-rail.sh" ] && ok || bad "prolog not executable"
if find "$dest" -name 'libnccl-net.so' -o -name 'libnccl-tuner.so' | grep -q .; then
  bad "a generic libnccl-net.so / libnccl-tuner.so was installed"
else ok; fi
if find "$dest" -mindepth 1 -maxdepth 1 ! -name usr | grep -q .; then
  bad "files outside /usr: $(find "$dest" -mindepth 1 -maxdepth 1 ! -name usr)"
else ok; fi
out=$("$dest/usr/bin/nccl-rail" --version) && echo "$out" | grep -q '^nccl-rail [0-9.]* (git ' && ok ||
  bad "installed nccl-rail --version: $out"

# Every subcommand of tools/main.c in nccl-rail(1) (.SS NAME) and in the completion's word list.
man="$dest/usr/share/man/man1/nccl-rail.1"
comp="$dest/usr/share/bash-completion/completions/nccl-rail"
cmds=$(grep -o 'strcmp(argv\[1\], "[a-z]*")' "$src/tools/main.c" | sed 's/.*"\([a-z]*\)")/\1/' | sort -u)
[ -n "$cmds" ] && ok || bad "no subcommands found in tools/main.c"
for c in $cmds; do
  grep -qx "\.SS $c" "$man" && ok || bad "nccl-rail(1) has no section for '$c'"
  grep -q "compgen -W \"[^\"]*\\b$c\\b" "$comp" && ok || bad "bash completion does not offer '$c'"
done
if command -v man >/dev/null 2>&1; then
  warn=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l "$man" 2>&1 >/dev/null)
  [ -z "$warn" ] && ok || bad "man page warnings: $warn"
fi
bash -n "$comp" && ok || bad "completion is not valid bash"
# The completion completes: "nccl-rail do<TAB>" -> doctor, "nccl-rail doctor --r<TAB>" -> --root.
res=$(bash -c "source '$comp'; COMP_WORDS=(nccl-rail do); COMP_CWORD=1; _nccl_rail; echo \"\${COMPREPLY[*]}\"
               COMP_WORDS=(nccl-rail doctor --r); COMP_CWORD=2; _nccl_rail; echo \"\${COMPREPLY[*]}\"")
[ "$res" = "$(printf 'doctor\n--root')" ] && ok || bad "completion gave: $res"
echo "install_layout: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
