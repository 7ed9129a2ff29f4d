# shellcheck shell=bash
# Sourced by the measure.sh of 2026-11-30-vm-f23m1-simulation-cost,
# 2026-11-30-vm-f6m207-simulation-settings and 2026-11-30-vm-f6m207-shared-malloc, which run smpirun
# themselves, one SimGrid setting at a time: base_cfg, scripts/simulate's configuration up to
# 1aa91b0 (its `config` list, copied; since then scripts/simulate runs smpi/shared-malloc:local,
# ../2026-11-30-vm-f6m207-shared-malloc), the environment its runs get, and
#   sim_platform SIMULATE_SCRIPT KEEP_DIR NODES SMPI_BUILD
# scripts/simulate's platform and host file for NODES hosts of 8 ranks, written into KEEP_DIR (its
# --keep) without running the simulation.
# shellcheck disable=SC2034  # base_cfg is the caller's
base_cfg=(smpi/coll-selector:ompi smpi/simulate-computation:no smpi/lat-factor:0:1 smpi/bw-factor:0:1
          network/crosstraffic:0 smpi/display-timing:no smpi/test:0 smpi/grow-injected-times:no smpi/wtime:0
          smpi/shared-malloc-blocksize:67108864)
export OMP_NUM_THREADS=1 SCALEPROBE_SIM_TOPOLOGY=flat SCALEPROBE_SIM_CONFIG="measure.sh variants"
sim_platform() {
  /usr/bin/python3 - "$1" "$2" "$3" "$4" <<'PY'
import importlib.machinery, sys, types
path, keep, nodes, build = sys.argv[1:5]
m = types.ModuleType("simulate")
m.__file__ = path
importlib.machinery.SourceFileLoader("simulate", path).exec_module(m)
m.subprocess.call = lambda *args, **kwargs: 0
sys.argv = ["simulate", "--keep", keep, "--nodes", nodes, "--ranks-per-node", "8", "--build", build, "bucket_sweep"]
sys.exit(m.main())
PY
}
