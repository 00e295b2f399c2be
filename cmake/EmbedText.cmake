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
