#!/usr/bin/env bash
# Install every Debian 12 package scaleprobe needs. Idempotent: installs only what is missing,
# and does nothing (not even `apt-get update`) when everything is already present.
set -euo pipefail

PACKAGES=(
  # build
  build-essential cmake ninja-build pkg-config git
  # MPI + parallel HDF5 (Open MPI flavour), PMIx for srun --mpi=pmix
  openmpi-bin libopenmpi-dev libpmix-dev libhdf5-openmpi-dev hdf5-tools
  # C++ libraries
  libfmt-dev libcli11-dev libopenblas-openmp-dev libgtest-dev libbenchmark-dev
  # analysis (Debian Python: use /usr/bin/python3)
  python3 python3-h5py python3-pandas python3-matplotlib python3-pytest python3-numpy
  # SLURM on one machine (tests and local campaigns)
  slurm-wlm munge
)
# Optional: PyTorch for the side-by-side trainer comparisons (large; SCALEPROBE_NO_TORCH=1 skips it).
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
