# SPDX-License-Identifier: Apache-2.0
# Writes the generated version header (run with cmake -P at configure and at every build, so the
# git SHA follows the checkout). Inputs: SRC_DIR, IN, OUT, VERSION, and optionally GIT_SHA (a
# packager's override). Outside a git checkout (a release tarball, a .deb source) the SHA is
# "unknown". configure_file only rewrites OUT when its text changes.
if(NOT GIT_SHA)
  set(GIT_SHA "unknown")
  find_program(RAIL_GIT git)
  if(RAIL_GIT AND EXISTS "${SRC_DIR}/.git")
    execute_process(COMMAND ${RAIL_GIT} -C "${SRC_DIR}" rev-parse --short=12 HEAD
                    OUTPUT_VARIABLE sha OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc
                    ERROR_QUIET)
    if(rc EQUAL 0 AND sha MATCHES "^[0-9a-f]+$")
      set(GIT_SHA "${sha}")
    endif()
  endif()
endif()
set(RAIL_VERSION "${VERSION}")
set(RAIL_GIT_SHA "${GIT_SHA}")
configure_file("${IN}" "${OUT}" @ONLY)
