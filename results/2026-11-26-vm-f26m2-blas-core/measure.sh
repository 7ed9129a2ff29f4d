#!/usr/bin/env bash
# gpt-tiny at 1 rank, 1 thread, with the BLAS core scaleprobe's start-up rule chooses against each
# core forced by hand, in interleaved passes (the order rotates by one every pass).
#   measure.sh BUILD_DIR OUT_DIR [PASSES]
# Sides (every run without the machine's own OPENBLAS_* settings):
#   rule        OpenBLAS' detection made to report Prescott (SCALEPROBE_TEST_BLAS_DETECTED): the rule
#               chooses from the CPU's features and the program starts itself again with that core
#   detected    OpenBLAS' own detection, nothing set
#   <core>      OPENBLAS_CORETYPE=<core> forced by hand
set -eu
B=$1 out=$2 passes=${3:-5}
mkdir -p "$out/raw"
sides=(rule detected Haswell Zen SkylakeX Cooperlake Prescott)
gpt=("$B/bin/gpt_train" -m gpt-tiny -B 8 -s 12 --val-batches 0 -q)
clean=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE -u OPENBLAS_VERBOSE -u SCALEPROBE_BLAS_CORE_DETECTED
       -u SCALEPROBE_TEST_BLAS_DETECTED OMP_NUM_THREADS=1)
n=${#sides[@]}
for ((p = 1; p <= passes; p++)); do
  for ((i = 0; i < n; i++)); do
    side=${sides[(i + p - 1) % n]}
    case $side in
      rule) extra=(SCALEPROBE_TEST_BLAS_DETECTED=Prescott) ;;
      detected) extra=() ;;
      *) extra=(OPENBLAS_CORETYPE=$side) ;;
    esac
    log="$out/raw/p${p}_$side.log"
    { echo "# pass $p side $side, $(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg)"
      "${clean[@]}" "${extra[@]}" "${gpt[@]}" -o "$out/raw/p${p}_$side.h5" 2>&1; } >"$log"
    echo "pass $p $side: $(grep -o '[0-9.]* ms/iteration' "$log")"
  done
done
