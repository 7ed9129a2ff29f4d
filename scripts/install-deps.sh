#!/usr/bin/env bash
# Install every Debian 12 package scaleprobe needs. Idempotent: installs only what is missing,
# and does nothing (not even `apt-get update`) when everything is already present.
#   SCALEPROBE_MPI=mpich   MPICH + libhdf5-mpich-dev instead of Open MPI (default: openmpi)
#   SCALEPROBE_NO_TORCH=1  skip PyTorch (only the side-by-side comparison scripts use it)
set -euo pipefail

case "${SCALEPROBE_MPI:-openmpi}" in
  openmpi) MPI_PACKAGES=(openmpi-bin libopenmpi-dev libpmix-dev libhdf5-openmpi-dev) ;;
  mpich)   MPI_PACKAGES=(mpich libmpich-dev libhdf5-mpich-dev) ;;
  *) echo "install-deps: SCALEPROBE_MPI must be openmpi or mpich" >&2; exit 2 ;;
esac

PACKAGES=(
  # build
  build-essential cmake ninja-build pkg-config git
  # compiles shared between test stages of the same flags (scripts/test.sh)
  ccache
  # MPI + parallel HDF5 of the same flavour (PMIx for srun --mpi=pmix with Open MPI)
  "${MPI_PACKAGES[@]}" hdf5-tools
  # C++ libraries
  libfmt-dev libcli11-dev nlohmann-json3-dev libopenblas-openmp-dev libgtest-dev libbenchmark-dev libhwloc-dev
  # oneDNN: the default GEMM library (kernels/gemm.hpp), its kernels generated for the CPU at hand;
  # its CMake config requires OpenCL's headers and loader, only recommended by libdnnl-dev
  libdnnl-dev ocl-icd-opencl-dev
  # Gloo: the gloo transport (--backend gloo; collectives/transports/gloo_transport.cpp)
  libgloo-dev
  # SimGrid's SMPI and the serial HDF5 it writes traces with: the simulated build (preset smpi,
  # docs/simulation.md); Debian keeps the parallel HDF5 the default (its alternative ranks higher)
  libsimgrid-dev libhdf5-dev
  # zlib: crc32, the whole-file digest of traces and checkpoints (core/file_digest)
  zlib1g-dev
  # fuzzing (tests/fuzz: clang with libFuzzer and the sanitizer runtimes)
  clang libclang-rt-14-dev
  # analysis (Debian Python: use /usr/bin/python3)
  python3 python3-h5py python3-pandas python3-matplotlib python3-pytest python3-numpy
  # SLURM on one machine (tests and local campaigns)
  slurm-wlm munge
  # the style checks (tests/lint: .clang-format, shellcheck, pyflakes in place of ruff, which
  # Debian 12 does not package)
  clang-format shellcheck pyflakes3
)
# PyTorch: the side-by-side trainer comparisons and a bucket-packing test use it (large).
[ "${SCALEPROBE_NO_TORCH:-0}" = 1 ] || PACKAGES+=(python3-torch)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
