# sp_add_pytest_file(name file [ENVIRONMENT var=value...]): one CTest entry (label python) running
# pytest on one test file, so a file that skips shows as "Not Run" while the others pass. The
# plugin tests/python/optional_parts.py exits 77 (SCALEPROBE_SKIP_RETURN_CODE) when something
# skipped and nothing failed, and in CI (SCALEPROBE_CI=1) fails skips that
# tests/optional-parts.txt does not allow. -rs prints each skip's reason. PROCESSORS 1: each file is
# mostly analysis in one process around short 2-rank runs whose ranks yield when idle — every
# file's CPU time was at most 1.2x its wall time on 2 cores (2026-11-26) — so ctest -j2 pairs them.
function(sp_add_pytest_file name file)
  cmake_parse_arguments(T "" "" "ENVIRONMENT" ${ARGN})
  add_test(NAME ${name} COMMAND /usr/bin/python3 -m pytest -q -rs -p no:cacheprovider ${file}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(${name} PROPERTIES LABELS python PROCESSORS 1 TIMEOUT 900 SKIP_RETURN_CODE 77
                       ENVIRONMENT "SCALEPROBE_SKIP_RETURN_CODE=77;${T_ENVIRONMENT}")
endfunction()
