#!/bin/bash
# Per after pass of RAW (default raw): the copy bandwidth allreduce_perf measured (median, GB/s)
# and, at 64M, MPI_Allreduce's and shm-seg's bus bandwidth (GB/s, the table's busbw column) out of
# place and in place, with shm-seg's over the copy bandwidth.   bash busbw.sh raw > raw-busbw-64M.txt
raw=${1:-raw}
echo "# pass copy_GBps mpi_out shm-seg_out shm-seg_out/copy mpi_in shm-seg_in shm-seg_in/copy"
for f in "$raw"/after-p*-shm.txt; do
  copy=$(grep -o "[0-9.]* GB/s (median)" "$f" | cut -d' ' -f1)
  awk -v copy="$copy" -v pass="$(basename "$f" -shm.txt)" '
    $1 == "64M" { bw[$6 "_" $5] = $14 }
    END { printf "%s %s %s %s %.3f %s %s %.3f\n", pass, copy, bw["mpi_out"], bw["shm-seg_out"], bw["shm-seg_out"] / copy,
          bw["mpi_in"], bw["shm-seg_in"], bw["shm-seg_in"] / copy }' "$f"
done
