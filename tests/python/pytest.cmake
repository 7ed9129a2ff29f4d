# sp_add_pytest_file(name file [ENVIRONMENT var=value...]): one CTest entry (label python) running
# pytest on one test file, so a file that skips shows as "Not Run" while the others pass. The
# plugin tests/python/optional_parts.py exits 77 (SCALEPROBE_SKIP_RETURN_CODE) when something
# skipped and nothing failed, and in CI (SCALEPROBE_CI=1) fails skips that
# tests/optional-parts.txt does not allow. -rs prints each skip's reason.
function(sp_add_pytest_file name file)
  cmake_parse_arguments(T "" "" "ENVIRONMENT" ${ARGN})
  add_test(NAME ${name} COMMAND /usr/bin/python3 -m pytest -q -rs -p no:cacheprovider ${file}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(${name} PROPERTIES LABELS python PROCESSORS 2 TIMEOUT 900 SKIP_RETURN_CODE 77
                       ENVIRONMENT "SCALEPROBE_SKIP_RETURN_CODE=77;${T_ENVIRONMENT}")
endfunction()
