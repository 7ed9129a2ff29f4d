#!/bin/bash
# The diagnosis behind this campaign, with Gloo's loop at its default priority
# (SCALEPROBE_GLOO_LOOP=normal): allreduce_perf on Gloo at 64 KiB bound one rank per core and
# unbound, then one second of `perf trace -s` on rank 0's last-started thread (Gloo's event loop)
# during a bound run.   bash probe.sh BIN_DIR > probe.log 2>&1
set -u
bin=$1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 SCALEPROBE_GLOO_LOOP=normal
for bind in core none; do
  echo "## --bind-to $bind"
  mpirun -x SCALEPROBE_GLOO_LOOP -np 2 --bind-to $bind "$bin/allreduce_perf" --backend gloo -a gloo,ring --sizes 64K \
    -n 500 --no-membw -o /tmp/probe-$bind.h5 | grep -E '^#  +size|^ +64K'
done
echo "## perf trace -s, 1 s of rank 0's Gloo loop thread, bound"
mpirun -x SCALEPROBE_GLOO_LOOP -np 2 --bind-to core "$bin/allreduce_perf" --backend gloo -a gloo --sizes 64K -n 3000 \
  --no-membw -o /tmp/probe-trace.h5 > /dev/null &
sleep 3
pid=$(pgrep -f "^$bin/allreduce_perf" | sort -n | head -1)
tid=$(ls "/proc/$pid/task" | sort -n | tail -1)
echo "thread $tid policy: $(chrt -p "$tid" | head -1)"
perf trace -s -t "$tid" -- sleep 1 2>&1 | grep -E 'syscall|epoll_wait|recvfrom|futex|writev'
wait
