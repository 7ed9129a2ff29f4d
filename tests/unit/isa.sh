#!/usr/bin/env bash
# The instruction-set machinery (cmake/isa.cmake, core/run/isa_check.cpp, kernels/variants.hpp):
#  1. the start-up check: a program on a CPU lacking a feature of the baseline (pretended with
#     SCALEPROBE_ISA_CHECK_PRETEND_MISSING) prints one line naming it and exits 2, before anything
#     else runs; without the pretence it starts (--help, exit 0);
#  2. the kernel variant: SCALEPROBE_KERNEL_ISA naming no variant, or a variant this CPU cannot
#     run, is a one-line error; the chosen variant is in the trace's provenance (kernel_isa);
#  3. the GEMM library (kernels/gemm.hpp): SCALEPROBE_GEMM naming no library of the build is a
#     one-line error; the library in use is in the trace's provenance (gemm_library): oneDNN by
#     default when the build has it, OpenBLAS when asked; likewise SCALEPROBE_CONV (conv_choice:
#     auto with oneDNN, direct without);
#  4. the AVX-512 objects define no weak (comdat) function: the linker could otherwise keep its
#     AVX-512 copy of a shared inline function for the whole program; nor does the start-up check's
#     object (it must not pick up a baseline copy).
#   isa.sh BUILD_DIR
set -u
B=$1
# shellcheck source=../lib/expect_error.sh
source "$(dirname "$0")/../lib/expect_error.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# provenance ATTRIBUTE TRACE: the trace's provenance attribute, as text.
provenance() {
  /usr/bin/python3 -c 'import h5py, sys; v = h5py.File(sys.argv[2])["provenance"].attrs[sys.argv[1]]; print(v.decode() if isinstance(v, bytes) else v)' "$1" "$2" 2>&1
}
features=$(grep -o 'isa_features = "[^"]*"' "$B/generated/core/run/build_info.hpp" | cut -d'"' -f2)
if [ -z "$features" ]; then
  # No baseline ISA (SCALEPROBE_ISA empty, or not x86-64): there is nothing to check at start-up, so
  # pretending a feature is missing must change nothing.
  checks=$((checks + 1))
  SCALEPROBE_ISA_CHECK_PRETEND_MISSING=avx2 "$B/bin/trace_check" --help >/dev/null 2>&1 ||
    { echo "FAIL: trace_check refused to start without a baseline ISA"; failures=$((failures + 1)); }
  finish isa
  exit
fi
first=${features%% *}
for prog in allreduce_perf trace_check gpt_train; do
  expect_error "this CPU lacks $first" env SCALEPROBE_ISA_CHECK_PRETEND_MISSING="$first" "$B/bin/$prog" --help
  SCALEPROBE_ISA_CHECK_PRETEND_MISSING="$first" "$B/bin/$prog" --help >/dev/null 2>&1
  [ $? = 2 ] || { echo "FAIL: $prog with $first missing did not exit 2"; failures=$((failures + 1)); }
  checks=$((checks + 1))
  "$B/bin/$prog" --help >/dev/null 2>&1 || { echo "FAIL: $prog --help failed on this CPU"; failures=$((failures + 1)); }
done
R=(env OMP_NUM_THREADS=1 "$B/bin/resnet_train" -m resnet20 --width 4 --depth 8 -s 1 -B 2 -q)
expect_error "SCALEPROBE_KERNEL_ISA=avx1024: not a kernel variant of this build" env SCALEPROBE_KERNEL_ISA=avx1024 "${R[@]}" -o "$tmp/a.h5"
if grep -qw avx512f /proc/cpuinfo; then want=x86-64-v4; else
  want=baseline
  expect_error "SCALEPROBE_KERNEL_ISA=x86-64-v4: this CPU cannot run that variant" env SCALEPROBE_KERNEL_ISA=x86-64-v4 "${R[@]}" -o "$tmp/b.h5"
fi
for isa in default baseline; do
  checks=$((checks + 1))
  if [ $isa = default ]; then "${R[@]}" -o "$tmp/$isa.h5" >/dev/null 2>&1; else SCALEPROBE_KERNEL_ISA=$isa "${R[@]}" -o "$tmp/$isa.h5" >/dev/null 2>&1; fi
  got=$(provenance kernel_isa "$tmp/$isa.h5")
  [ $isa = baseline ] && expect=baseline || expect=$want
  [ "$got" = "$expect" ] || { echo "FAIL: kernel_isa '$got' in the trace of the $isa run, wanted $expect"; failures=$((failures + 1)); }
done
expect_error "SCALEPROBE_GEMM=mkl: not auto or a GEMM library of this build" env SCALEPROBE_GEMM=mkl "${R[@]}" -o "$tmp/c.h5"
# auto (kernels/gemm.hpp): attention in oneDNN, the dense GEMMs too where the CPU has AVX-512
if ! grep -q SP_KERNELS_HAVE_ONEDNN "$B/compile_commands.json"; then default_gemm=openblas
elif [ $want = x86-64-v4 ]; then default_gemm=onednn
else default_gemm="openblas (attention: onednn)"; fi
expect_error "SCALEPROBE_CONV=fast: not auto, direct or onednn" env SCALEPROBE_CONV=fast "${R[@]}" -o "$tmp/d.h5"
[ "$default_gemm" = openblas ] && default_conv=direct || default_conv=auto
checks=$((checks + 1))
got=$(provenance conv_choice "$tmp/default.h5")
[ "$got" = "$default_conv" ] || { echo "FAIL: conv_choice '$got' in the trace of the default run, wanted $default_conv"; failures=$((failures + 1)); }
for gemm in default openblas; do
  checks=$((checks + 1))
  if [ $gemm = default ]; then "${R[@]}" -o "$tmp/g$gemm.h5" >/dev/null 2>&1; else SCALEPROBE_GEMM=$gemm "${R[@]}" -o "$tmp/g$gemm.h5" >/dev/null 2>&1; fi
  got=$(provenance gemm_library "$tmp/g$gemm.h5")
  [ $gemm = default ] && expect=$default_gemm || expect=$gemm  # one name: every use in that library
  [ "$got" = "$expect" ] || { echo "FAIL: gemm_library '$got' in the trace of the $gemm run, wanted $expect"; failures=$((failures + 1)); }
done
for v4 in conv_direct_v4 gelu_v4 softmax_v4; do
  checks=$((checks + 1))
  weak=$(nm -C --defined-only -A "$B/kernels/libscaleprobe_kernels.a" 2>/dev/null | grep "$v4" | grep ' W ')
  if ! nm -A "$B/kernels/libscaleprobe_kernels.a" 2>/dev/null | grep -q "$v4"; then
    echo "FAIL: no $v4 object in $B/kernels/libscaleprobe_kernels.a (baseline: $features)"; failures=$((failures + 1))
  elif [ -n "$weak" ]; then
    echo "FAIL: the AVX-512 object $v4 defines weak functions:"; echo "$weak"; failures=$((failures + 1))
  fi
done
checks=$((checks + 1))
check_obj=$(find "$B/core" -name 'isa_check.cpp.o' | head -1)
weak=$(nm -C --defined-only "$check_obj" 2>/dev/null | grep ' W ')
[ -n "$check_obj" ] && [ -z "$weak" ] || { echo "FAIL: the start-up check's object ($check_obj) defines weak functions: $weak"; failures=$((failures + 1)); }
finish isa
