# Turns one file into a C array at build time (cmake -P embed.cmake with -DINPUT= -DOUTPUT=
# -DNAME=): `const unsigned char NAME[]` holding the file's bytes plus a final NUL, and
# `const size_t NAME_len`, the byte count without the NUL. The report embeds its charting library,
# script and style sheet this way so that the HTML it writes is one file (docs/report.md).
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR len "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUTPUT}"
  "/* Generated from ${INPUT} by coordinator/report/embed.cmake; do not edit. */\n"
  "#include <stddef.h>\n"
  "const unsigned char ${NAME}[] = {${bytes}0x00};\n"
  "const size_t ${NAME}_len = ${len};\n")
