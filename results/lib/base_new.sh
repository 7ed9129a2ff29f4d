# Sourced by the measure.sh of the campaigns that time one trainer from several builds beside the
# PyTorch peer (results/lib/README.md names them; run from anywhere; raw/ beside the sourcing
# script).
# base_new_passes MODEL PASSES OUT SRC NAME=BUILD...: per pass and thread count (1, 2) each named
# build's trainer (MODEL resnet: ResNet-20, batch 32; gpt: gpt-tiny, batch 8; 12 steps,
# --profile-kernels; the builds' order rotated by one every pass), then the PyTorch peer with its
# OpenBLAS on the core the trainer chose; OUT/MODEL-tT-NAME-pP.{h5,log} and, for ResNet-20,
# OUT/torch-tT-pP.{json,err} (gpt: OUT/torch-gpt-tT-pP.*).
# base_new_resnet_passes BASE_BUILD NEW_BUILD PASSES OUT SRC: ResNet-20 from the builds base and new.
# base_new_campaign MODEL SCRIPT BASE_BUILD NEW_BUILD [PASSES]: a campaign's whole measure.sh: the
# builds base and new, PASSES (7) passes, raw/ beside SCRIPT, then the end line.
# shellcheck shell=bash

base_new_passes() {
  local model=$1 passes=$2 out=$3 src=$4 p t i n name core spec
  shift 4
  local -a names=() builds=() order
  for spec in "$@"; do names+=("${spec%%=*}"); builds+=("${spec#*=}"); done
  local -a train peer
  case $model in
    resnet) train=(trainers/resnet/resnet_train -m resnet20 -B 32 --val-images 0)
            peer=(scaleprobe_peers.resnet_torch --model resnet20 --batch 32) ;;
    gpt) train=(trainers/gpt/gpt_train -m gpt-tiny -B 8 --val-batches 0)
         peer=(scaleprobe_peers.gpt_torch --model gpt-tiny --batch 8) ;;
    *) echo "base_new_passes: unknown model $model" >&2; return 2 ;;
  esac
  local torch_prefix=torch; [ "$model" = resnet ] || torch_prefix=torch-$model
  unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE SCALEPROBE_GEMM SCALEPROBE_CONV   # the VM exports OPENBLAS_CORETYPE
  local cpu
  cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) family$(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2)"
  cpu+=" model$(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2)"
  echo "# start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) cpu$cpu"
  for p in $(seq 1 "$passes"); do
    order=()
    for i in "${!names[@]}"; do order+=($(((i + p - 1) % ${#names[@]}))); done
    for t in 1 2; do
      for i in "${order[@]}"; do
        name="$model-t$t-${names[$i]}-p$p"
        OMP_NUM_THREADS=$t "${builds[$i]}/${train[0]}" "${train[@]:1}" --threads "$t" -s 12 -q \
          --profile-kernels -o "$out/$name.h5" > "$out/$name.log" 2>&1 || { echo "FAILED $name"; tail -3 "$out/$name.log"; }
      done
      n=${names[$((${#names[@]} - 1))]}
      core=$(grep -o 'core=[A-Za-z0-9]*' "$out/$model-t$t-$n-p$p.log" | head -1 | cut -d= -f2)
      OPENBLAS_CORETYPE=$core OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t PYTHONPATH="$src/python" \
        /usr/bin/python3 -m "${peer[@]}" --threads "$t" --steps 12 \
        > "$out/$torch_prefix-t$t-p$p.json" 2> "$out/$torch_prefix-t$t-p$p.err" \
        || { echo "FAILED torch t$t p$p"; tail -3 "$out/$torch_prefix-t$t-p$p.err"; }
    done
    echo "# pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
  done
}

base_new_resnet_passes() {
  base_new_passes resnet "$3" "$4" "$5" "base=$1" "new=$2"
}

base_new_campaign() {
  local model=$1 here src
  here=$(cd "$(dirname "$2")" && pwd); src=$(cd "$here/../.." && pwd)
  mkdir -p "$here/raw"
  base_new_passes "$model" "${5:-7}" "$here/raw" "$src" "base=$3" "new=$4"
  echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
}
