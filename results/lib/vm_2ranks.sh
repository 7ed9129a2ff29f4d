# Sourced by the measure.sh of the 2-rank engine campaigns on the 2-vCPU VM
# (2026-11-26-vm-f26m2-overlap-2ranks, 2026-11-26-vm-f26m2-shm-engine), which take
# BUILD_DIR OUT_DIR PASSES: those three (build, out, passes), OUT_DIR made, the environment, the
# two models' command lines (model[gpt], model[resnet]) and run_2ranks.
# shellcheck shell=bash disable=SC2034  # build, passes and model are for the sourcing script
build=${1:-build/release}; out=${2:-raw}; passes=${3:-5}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
# The VM exports OPENBLAS_CORETYPE=Haswell (1.5x slower GEMMs here, results/2026-11-26-vm-f26m2-blas-core):
# OpenBLAS's own choice instead (Cooperlake on this CPU).
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
declare -A model=([gpt]="$build/trainers/gpt/gpt_train -m gpt-tiny -B 8 --val-batches 0"
                  [resnet]="$build/trainers/resnet/resnet_train -m resnet20 -B 32 --val-images 0")

# run_2ranks NAME ARG...: mpirun -np 2 --bind-to core ARG... -o OUT_DIR/NAME.h5, its output in
# OUT_DIR/NAME.log; a failed run is named, with the log's last lines.
run_2ranks() {
  local name=$1
  shift
  mpirun -np 2 --bind-to core "$@" -o "$out/$name.h5" > "$out/$name.log" 2>&1 \
    || { echo "FAILED $name"; tail -3 "$out/$name.log"; }
}
