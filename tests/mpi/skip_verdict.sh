#!/usr/bin/env bash
# The verdict of an MPI gtest entry (sp_add_mpi_test, tests/lib/mpi_test.cmake): a throw-away CTest
# project registers test_skip_verdict (one skipping test, one failing only when SP_PLANT_FAILURE is
# set) through the real sp_add_mpi_test at 2 ranks, and ctest must report
#   a failure beside a skip (on every rank, or on rank 1 only)   Failed, not Skipped
#   every test skipped                                           Not Run (exit 77)
#   a skip beside a pass                                         Not Run (never Passed)
#   every test passed                                            Passed
# and the old rule (SKIP_REGULAR_EXPRESSION "[  SKIPPED ]") reports the planted failure Skipped.
#   skip_verdict.sh <source dir> <test_skip_verdict> <mpiexec> <numproc flag> [mpiexec flags...]
set -euo pipefail
src=$1 bin=$2 mpiexec=$3 npflag=$4
shift 4
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(skip_verdict NONE)
enable_testing()
set(MPIEXEC_EXECUTABLE "$mpiexec")
set(MPIEXEC_NUMPROC_FLAG "$npflag")
set(SCALEPROBE_MPIEXEC_FLAGS $*)
set(SCALEPROBE_MPI_TEST_ENV "SP_SKIP_VERDICT=1")
include("$src/tests/lib/mpi_test.cmake")
add_executable(skip_verdict IMPORTED)
set_target_properties(skip_verdict PROPERTIES IMPORTED_LOCATION "$bin")
sp_add_mpi_test(fail_and_skip skip_verdict RANKS 2)
set_property(TEST fail_and_skip.np2 APPEND PROPERTY ENVIRONMENT SP_PLANT_FAILURE=all)
sp_add_mpi_test(fail_on_rank1_and_skip skip_verdict RANKS 2)
set_property(TEST fail_on_rank1_and_skip.np2 APPEND PROPERTY ENVIRONMENT SP_PLANT_FAILURE=rank1)
sp_add_mpi_test(all_skip skip_verdict RANKS 2 ARGS --gtest_filter=SkipVerdict.Skips)
sp_add_mpi_test(skip_and_pass skip_verdict RANKS 2)
sp_add_mpi_test(all_pass skip_verdict RANKS 2 ARGS --gtest_filter=SkipVerdict.PassesUnlessPlanted)
add_test(NAME old_rule.np2 COMMAND "$mpiexec" $npflag 2 $* "$bin")
set_tests_properties(old_rule.np2 PROPERTIES ENVIRONMENT SP_PLANT_FAILURE=all
                     SKIP_REGULAR_EXPRESSION "\\\\[  SKIPPED \\\\]")
CMAKE
cmake -S "$tmp" -B "$tmp/build" >/dev/null
ctest --test-dir "$tmp/build" --output-on-failure >"$tmp/out" 2>&1 || true
got=$(sed -nE 's/.*Test +#[0-9]+: ([a-z0-9_]+\.np2) \.+[ *]*(Passed|Skipped|Failed|Not Run).*/\1=\2/p' "$tmp/out" | sort | tr '\n' ' ')
want="all_pass.np2=Passed all_skip.np2=Skipped fail_and_skip.np2=Failed fail_on_rank1_and_skip.np2=Failed old_rule.np2=Skipped skip_and_pass.np2=Skipped "
if [ "$got" != "$want" ]; then
  echo "FAIL: ctest verdicts"; echo "  got:  $got"; echo "  want: $want"; cat "$tmp/out"; exit 1
fi
# The failures are reported, and rank 1's through rank 0's closing line.
grep -q "planted failure" "$tmp/out" && grep -q "a test failed on another rank" "$tmp/out" ||
  { echo "FAIL: the planted failures are not reported:"; cat "$tmp/out"; exit 1; }
echo "skip_verdict: 6 entries as expected ($got)"
