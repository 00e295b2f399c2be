# Helpers for the files generated at configure time (embedded shaders, embedded scenarios).

# bhviz_raw_string(OUT FILE DELIMITER): sets OUT to the text of FILE as a C++ raw string
# literal R"DELIMITER(...)DELIMITER"; fails if the text contains the closing delimiter.
function(bhviz_raw_string out file delimiter)
  file(READ ${file} text)
  string(FIND "${text}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${file} contains the raw-string delimiter )${delimiter}\"")
  endif()
  set(${out} "R\"${delimiter}(${text})${delimiter}\"" PARENT_SCOPE)
endfunction()

# bhviz_write_if_changed(FILE CONTENT): writes CONTENT to FILE only when it differs, so that
# nothing rebuilds needlessly.
function(bhviz_write_if_changed file content)
  if(EXISTS ${file})
    file(READ ${file} old)
  else()
    set(old "")
  endif()
  if(NOT old STREQUAL content)
    file(WRITE ${file} "${content}")
  endif()
endfunction()

# bhviz_embed_literals(BODY TABLE PREFIX DELIMITER NAME_PART FILE...): for each FILE, appends to
# BODY a definition `const char <PREFIX><i>[] = <raw string>;` and to TABLE a row
# `{"<name>", <PREFIX><i>},` (name: the file name's NAME_PART, as get_filename_component gives
# it, e.g. NAME or NAME_WE), and makes an edit of any FILE re-run the configure step.
function(bhviz_embed_literals body_var table_var prefix delimiter name_part)
  set(body "")
  set(table "")
  set(index 0)
  foreach(file IN LISTS ARGN)
    get_filename_component(name ${file} ${name_part})
    bhviz_raw_string(literal ${file} ${delimiter})
    string(APPEND body "const char ${prefix}${index}[] = ${literal};\n")
    string(APPEND table "    {\"${name}\", ${prefix}${index}},\n")
    math(EXPR index "${index} + 1")
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ARGN})
  set(${body_var} "${body}" PARENT_SCOPE)
  set(${table_var} "${table}" PARENT_SCOPE)
endfunction()
