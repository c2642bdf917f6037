# cmake -DOUTPUT=file.c -DSYMBOL=name -DFILES="a|b" -P embed_files.cmake
# Writes a C array `const struct asys_embedded_file SYMBOL[]` holding the
# files' contents (NUL-terminated), ending with {NULL, NULL}.
string(REPLACE "|" ";" FILES "${FILES}")
set(body "#include \"embedded_files.h\"\n\n")
set(table "const struct asys_embedded_file ${SYMBOL}[] = {\n")
set(index 0)
foreach(path IN LISTS FILES)
  file(READ "${path}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  get_filename_component(name "${path}" NAME)
  string(APPEND body "static const char ${SYMBOL}_${index}[] = {${hex}0x00};\n")
  string(APPEND table "    {\"${name}\", ${SYMBOL}_${index}},\n")
  math(EXPR index "${index} + 1")
endforeach()
string(APPEND table "    {0, 0},\n};\n")
file(WRITE "${OUTPUT}.tmp" "${body}\n${table}")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
