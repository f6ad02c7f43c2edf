# SPDX-License-Identifier: Apache-2.0
# install(): `cmake --install BUILD [--prefix P]` (DESTDIR honoured), used by debian/rules and
# packaging/rpm/nccl-rail.spec. With prefix /usr on Debian, CMAKE_INSTALL_LIBDIR is the multiarch
# directory (lib/x86_64-linux-gnu), where NCCL's bare-name dlopen finds the plugins with no
# LD_LIBRARY_PATH. Never installs a generic libnccl-net.so: NCCL_NET_PLUGIN=rail selects ours.
include(GNUInstallDirs)

# The plugins are runtime-loaded modules (no SONAME, no headers, no development package).
install(TARGETS nccl-net-rail nccl-tuner-rail LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS nccl-rail RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# nccl-rail(1), with the version filled in.
configure_file(${CMAKE_SOURCE_DIR}/docs/nccl-rail.1.in ${CMAKE_BINARY_DIR}/nccl-rail.1 @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/nccl-rail.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

install(FILES ${CMAKE_SOURCE_DIR}/packaging/bash-completion/nccl-rail
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions)

# share/doc/nccl-rail: the README, the release notes and docs/ (the license goes where each
# package format wants it: debian/copyright, %license).
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/CHANGELOG.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md" PATTERN "*.json")

# The Slurm prolog health check of docs/deploy.md.
install(PROGRAMS ${CMAKE_SOURCE_DIR}/packaging/slurm/prolog-nccl-rail.sh
        DESTINATION ${CMAKE_INSTALL_DATADIR}/nccl-rail)
