# Unit tests of the compute kernels (kernels/), included from tests/unit/CMakeLists.txt.
# Runs single-threaded so the finite-difference checks are exactly reproducible; the test
# ThreadCountIndependent sets its own thread counts.
include(GoogleTest)
add_executable(test_kernels
  ${CMAKE_CURRENT_LIST_DIR}/test_kernels_gradcheck.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_kernels_forward.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_kernels_optim.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_cnn_kernels.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_batchnorm_pool_kernels.cpp
  ${CMAKE_CURRENT_LIST_DIR}/test_gemm.cpp
)
target_link_libraries(test_kernels PRIVATE scaleprobe_kernels GTest::gtest_main OpenMP::OpenMP_CXX)
target_compile_definitions(test_kernels PRIVATE SCALEPROBE_OPTIONAL_PARTS_FILE="${PROJECT_SOURCE_DIR}/tests/optional-parts.txt")
# gtest_discover_tests (CMake 3.25) flattens PROPERTIES, so ENVIRONMENT "A=1;B=1" would keep only
# A=1 (B=1 is dropped, checked with ctest --show-only=json-v1). Hence one variable through
# ENVIRONMENT and the other through ENVIRONMENT_MODIFICATION, each a single list element.
# (The OpenMP build of OpenBLAS follows OMP_NUM_THREADS and ignores OPENBLAS_NUM_THREADS; the
# latter matters only for a pthreads BLAS.)
gtest_discover_tests(test_kernels PROPERTIES LABELS unit
                     ENVIRONMENT "OMP_NUM_THREADS=1"
                     ENVIRONMENT_MODIFICATION "OPENBLAS_NUM_THREADS=set:1")
# The tests of the kernels with ISA variants (kernels/variants.hpp: the direct convolution, GELU,
# attention's softmax) once more on the baseline variant (the run above uses the widest this CPU
# runs: on AVX-512 machines the x86-64-v4 variant).
add_test(NAME kernels.baseline_variant COMMAND test_kernels
         --gtest_filter=Conv2d.*:CnnGradCheck.*:GradCheck.Gelu:KernelsForward.GeluKnownValues:KernelsForward.BiasTakenIntoTheNextPassEqualsTheAddThenTheKernel:KernelsForward.BiasGradientTakenInThePassIsTheColumnSum:GradCheck.Attention:KernelsForward/AttentionRowBlock.*)
set_tests_properties(kernels.baseline_variant PROPERTIES LABELS unit SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]"
                     ENVIRONMENT "SCALEPROBE_KERNEL_ISA=baseline;SCALEPROBE_CONV=direct;OMP_NUM_THREADS=1;OPENBLAS_NUM_THREADS=1")

# The convolution tests once more with every 3x3 convolution on the direct path (the run above
# sends the 3x3 convolutions with outputs of at most 16x16 to oneDNN when the build has it:
# SCALEPROBE_CONV=auto).
add_test(NAME kernels.conv_direct_path COMMAND test_kernels --gtest_filter=Conv2d.*:CnnGradCheck.*)
set_tests_properties(kernels.conv_direct_path PROPERTIES LABELS unit SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]"
                     ENVIRONMENT "SCALEPROBE_CONV=direct;OMP_NUM_THREADS=1;OPENBLAS_NUM_THREADS=1")

# The BLAS core decision (kernels/blas_core.hpp) as a pure function; the start-up around it, a real
# re-execution included, is the blas_core test (blas_core.sh, tests/unit/CMakeLists.txt).
add_executable(test_blas_core ${CMAKE_CURRENT_LIST_DIR}/test_blas_core.cpp)
target_link_libraries(test_blas_core PRIVATE scaleprobe_kernels GTest::gtest_main)
gtest_discover_tests(test_blas_core PROPERTIES LABELS unit)
