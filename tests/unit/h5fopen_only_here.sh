#!/usr/bin/env bash
# No code outside tests/ opens an HDF5 file except through the verified open (core/trace/h5_open.cpp):
# H5Fopen, H5Fis_hdf5/H5Fis_accessible and H5LTopen_file_image appear nowhere else in the C++
# sources. A self-check plants a call in a scratch tree and requires the scan to find it.
# Usage: h5fopen_only_here.sh <source dir>
set -u
src=$1
scan() {  # <tree>: prints each offending line (file:line:text)
  grep -rnE --include='*.cpp' --include='*.hpp' --include='*.h' --include='*.cc' --include='*.cu' \
    '\b(H5Fopen|H5Fis_hdf5|H5Fis_accessible|H5LTopen_file_image)[[:space:]]*\(' "$1" \
    --exclude-dir=tests --exclude-dir=build --exclude-dir=.git | grep -v "^$1/core/trace/h5_open.cpp:"
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/core/trace" "$tmp/tests"
echo 'hid_t f = H5Fopen (p, H5F_ACC_RDONLY, H5P_DEFAULT);' >"$tmp/core/planted.cpp"
echo 'hid_t f = H5Fopen(p, H5F_ACC_RDONLY, H5P_DEFAULT);' >"$tmp/core/trace/h5_open.cpp"
echo 'hid_t f = H5Fopen(p, H5F_ACC_RDONLY, H5P_DEFAULT);' >"$tmp/tests/allowed.cpp"
found=$(scan "$tmp")
if [ "$(grep -c . <<<"$found")" -ne 1 ] || ! grep -q planted.cpp <<<"$found"; then
  echo "FAIL: the self-check found '$found', wanted exactly core/planted.cpp"; exit 1
fi
bad=$(scan "$src")
if [ -n "$bad" ]; then
  echo "FAIL: HDF5 files opened outside core/trace/h5_open.cpp (use sp::open_h5_for_reading):"; echo "$bad"; exit 1
fi
echo "h5fopen_only_here: no HDF5 open outside core/trace/h5_open.cpp"
