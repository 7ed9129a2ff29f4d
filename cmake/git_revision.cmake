# Run at build time: writes ${OUT} with the current `git describe`, touching it only on change.
execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=12
                OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR rev STREQUAL "")
  set(rev "unknown")
endif()
set(content "// Generated at build time by cmake/git_revision.cmake.\n#include \"core/run/build_info.hpp\"\nstd::string sp::build_info::git_revision() { return \"${rev}\"; }\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUT}" "${content}")
endif()
