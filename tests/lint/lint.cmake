# The style checks (label lint), one CTest entry per tool over the tracked files: lint.clang_format
# (.clang-format), lint.shellcheck, lint.pyflakes (Debian 12 packages no ruff). Seconds each; the
# release stage of scripts/test.sh runs them, the others leave them out (same files, same verdict).
foreach(tool clang-format shellcheck pyflakes)
  string(REPLACE "-" "_" name ${tool})
  add_test(NAME lint.${name} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/lint.sh ${PROJECT_SOURCE_DIR} ${tool})
  set_tests_properties(lint.${name} PROPERTIES LABELS lint TIMEOUT 300)
endforeach()
