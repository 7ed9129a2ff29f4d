# Sourced by the measure.sh of 2026-11-28-vm-f6m207-shard and 2026-11-28-vm-f6m207-shard-gather
# (run from their folder; raw/ there). Each sets the arrays gpt and resnet (a model's command line)
# and the associative array how (a variant's flags) before calling rotated_passes.
# shellcheck shell=bash disable=SC2154  # gpt, resnet and how are the sourcing script's

# rotated_passes PASSES RUN...: per pass p, every RUN (MODEL:VARIANT) once, the order rotated by one
# every pass: 2 ranks bound one per core, MODEL's command line and ${how[VARIANT]}'s words,
# -o raw/MODEL-VARIANT-pP.h5, its output in raw/MODEL-VARIANT-pP.txt; a failed run is named. After
# each pass its time and the load.
rotated_passes() {
  local passes=$1 p k r model variant cmd
  shift
  local runs=("$@")
  for p in $(seq 1 "$passes"); do
    for k in "${!runs[@]}"; do
      r=${runs[$(( (k + p - 1) % ${#runs[@]} ))]}
      model=${r%%:*} variant=${r##*:}
      if [ "$model" = gpt ]; then cmd=("${gpt[@]}"); else cmd=("${resnet[@]}"); fi
      # shellcheck disable=SC2086  # the variant's flags are words
      mpirun -np 2 --bind-to core "${cmd[@]}" ${how[$variant]} -o "raw/$model-$variant-p$p.h5" > "raw/$model-$variant-p$p.txt" 2>&1 \
        || echo "FAILED $r pass $p"
    done
    echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
  done
}
