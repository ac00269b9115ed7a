# Writes the files INPUTS (a ;-separated list) into OUTPUT as C++ strings, in order:
# SYMBOL_names[i] is file i's name without folder and suffix, SYMBOL_sources[i] its text, and
# SYMBOL_count how many there are.
set(names "")
set(sources "")
set(arrays "")
set(index 0)
foreach(input ${INPUTS})
  get_filename_component(name "${input}" NAME_WE)
  file(READ "${input}" content HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${content}")
  string(APPEND arrays "const char text${index}[] = {${bytes}0x00};\n")
  string(APPEND names "\"${name}\", ")
  string(APPEND sources "text${index}, ")
  math(EXPR index "${index} + 1")
endforeach()
file(WRITE "${OUTPUT}" "#include <cstddef>\nnamespace {\n${arrays}}  // namespace\n"
  "extern const char* const ${SYMBOL}_names[] = {${names}};\n"
  "extern const char* const ${SYMBOL}_sources[] = {${sources}};\n"
  "extern const std::size_t ${SYMBOL}_count = ${index};\n")
