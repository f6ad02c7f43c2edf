# SPDX-License-Identifier: Apache-2.0
# Writes a C file holding a text file as a NUL-terminated byte array (run with cmake -P by a
# custom command, so it is rewritten whenever the text changes). Inputs: IN (the text), OUT (the
# .c file), SYMBOL (the array's name; SYMBOL_len holds its length without the NUL).
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" nhex)
math(EXPR len "${nhex} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n    " bytes "${bytes}")
file(WRITE "${OUT}.tmp"
     "/* Generated from ${IN} by cmake/embed_text.cmake: do not edit. */\n"
     "#include <stddef.h>\n"
     "const char ${SYMBOL}[] = {\n    ${bytes}0x00};\n"
     "const size_t ${SYMBOL}_len = ${len};\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
