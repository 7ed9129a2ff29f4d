# The baseline instruction set every object is compiled for (SCALEPROBE_ISA, an -march value;
# default x86-64-v3 on x86-64: AVX2 + FMA, every x86 server CPU since 2013-2015), so a binary built
# on a login node runs on the compute nodes. `native` (the `native` preset) tunes for the build
# machine. The hot kernels whose speed depends on the vector width are also compiled for wider
# sets and chosen at run time (kernels/conv_direct.hpp): a portable build keeps a native one's speed.
# The features the baseline needs are listed for the start-up check (core/run/isa_check.cpp) and the
# provenance, read from the compiler's own predefined macros for that -march.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(_sp_isa_default x86-64-v3)
else()
  set(_sp_isa_default "")  # other architectures: the compiler's default
endif()
set(SCALEPROBE_ISA "${_sp_isa_default}" CACHE STRING
    "Baseline -march of every object (x86-64-v3, x86-64-v4, native, ...; empty: the compiler's default)")

set(SCALEPROBE_ISA_FEATURES "")
set(SCALEPROBE_KERNEL_V4 OFF)
if(SCALEPROBE_ISA)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -march=${SCALEPROBE_ISA} -dM -E -x c++ /dev/null
                  OUTPUT_VARIABLE _sp_macros ERROR_VARIABLE _sp_err RESULT_VARIABLE _sp_rc)
  if(NOT _sp_rc EQUAL 0)
    message(FATAL_ERROR "SCALEPROBE_ISA=${SCALEPROBE_ISA}: ${CMAKE_CXX_COMPILER} refuses -march=${SCALEPROBE_ISA}: ${_sp_err}")
  endif()
  add_compile_options(-march=${SCALEPROBE_ISA})
  # Macro -> __builtin_cpu_supports name (those GCC 12 and clang 14 both know).
  foreach(_sp_pair SSE4_2:sse4.2 POPCNT:popcnt AVX:avx AVX2:avx2 FMA:fma BMI:bmi BMI2:bmi2
                   AVX512F:avx512f AVX512BW:avx512bw AVX512CD:avx512cd AVX512DQ:avx512dq AVX512VL:avx512vl)
    string(REPLACE ":" ";" _sp_pair "${_sp_pair}")
    list(GET _sp_pair 0 _sp_macro)
    list(GET _sp_pair 1 _sp_feature)
    if(_sp_macros MATCHES "#define __${_sp_macro}__ ")
      list(APPEND SCALEPROBE_ISA_FEATURES ${_sp_feature})
    endif()
  endforeach()
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND NOT "avx512f" IN_LIST SCALEPROBE_ISA_FEATURES)
    set(SCALEPROBE_KERNEL_V4 ON)
  endif()
endif()
list(JOIN SCALEPROBE_ISA_FEATURES " " SCALEPROBE_ISA_FEATURES_TEXT)
message(STATUS "scaleprobe: baseline ISA '${SCALEPROBE_ISA}' (needs: ${SCALEPROBE_ISA_FEATURES_TEXT}); "
               "AVX-512 kernel variant: ${SCALEPROBE_KERNEL_V4}")
# For core/run/isa_check.cpp: F("avx2") F("fma") ...
set(SCALEPROBE_ISA_FEATURE_CHECKS "")
foreach(_sp_feature IN LISTS SCALEPROBE_ISA_FEATURES)
  string(APPEND SCALEPROBE_ISA_FEATURE_CHECKS " F(\"${_sp_feature}\")")
endforeach()
