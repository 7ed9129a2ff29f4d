#!/bin/bash
# Issue 30: do SimGrid settings, or how the ring issues its MPI calls, lower the CPU one simulated
# message costs while the simulated times stay exactly the same? ResNet-50's gradients (bucket_sweep
# --layout resnet50 -c all: one buffer) through the ring, on scripts/simulate's flat platform of
# 8-rank hosts with scripts/simulate's configuration (copied into ../lib/sim_platform.sh) plus one change per variant;
# one simulation at a time. -n 1 runs (start-up + one ring) and -n 2 runs (one more ring): their
# difference is what one ring costs without the start-up.
#  256 ranks (32 hosts), every variant twice:
#  - base; contexts/factory ucontext, boost, thread (raw the default); contexts/stack-size 128, 64
#    (KiB; 8192 the default); contexts/guard-size:0 (1 page the default); smpi/privatization dlopen
#    (smpirun's default "1" on Linux) and mmap; smpirun -no-privatize (privatization off);
#    smpi/shared-malloc-blocksize 2 MiB, alone and with smpi/shared-malloc-hugepage on a hugetlbfs
#    mounted here (it requires blocks of one huge page; unmounted and vm.nr_hugepages restored after);
#    network/optim:Full; network/maxmin-selective-update:no (once: refused under Lazy);
#    smpi/cpu-threshold:-1; the platform without its backbone (bb_bw/bb_lat removed);
#  - the ring's MPI calls (ring-exchange-experiment.patch on this revision, built in a scratch copy
#    under /tmp, nothing in the repository changed): a ring step of one segment is MPI_Irecv,
#    MPI_Isend, MPI_Wait, MPI_Wait; the patched binary turns post_recv/post_send/wait/wait into one
#    MPI_Sendrecv (SCALEPROBE_EXP_RING_CALLS=sendrecv) or MPI_Irecv+MPI_Isend+MPI_Waitall (=waitall);
#    unset, it runs the original calls; combined with -no-privatize and with huge pages.
#  512 ranks (64 hosts), once each: base, sendrecv, -no-privatize + sendrecv, -n 1 and -n 2.
#  256 ranks base -n 5 under perf record -g (smpirun -keep-temps so the program's copies resolve):
#    raw/perf-r256-n5.txt, by library and top symbols over the run's second half.
#  1024 ranks (128 hosts), once: -no-privatize + sendrecv, -n 1.
#  Part "repeat512" (run after the first, appended to measure.log): 512 ranks again, base, the patched
#  binary with its original calls, and sendrecv, -n 1 and -n 2 (the 256-rank differences between -n 2
#  and -n 1 are within the runs' noise).
#  Part "original" (appended third): the patched binary with SCALEPROBE_EXP_RING_CALLS unset (its
#  original calls), 256 ranks twice and 512 ranks once, -n 1 and -n 2. Until this part, run() passed
#  the variable set to the empty string when no mode was asked for, which the patched binary takes as
#  set (MPI_Irecv + MPI_Isend + MPI_Waitall): the first two parts' *patched-original-calls* runs ran
#  that path, not the original calls; run() now passes it only when a mode is asked for.
#  Part "verify" (appended fourth): 16 ranks (2 hosts), caps 1, 25 and all (private buffers: results
#  verified, column #wrong), the patched binary with its original calls and with sendrecv.
#   bash measure.sh SMPI_BUILD > measure.log 2>&1      (as root: the hugetlbfs mount)
#   bash measure.sh SMPI_BUILD repeat512 >> measure.log 2>&1
#   bash measure.sh SMPI_BUILD original >> measure.log 2>&1
#   bash measure.sh SMPI_BUILD verify >> measure.log 2>&1
set -u
build=$(cd "$1" && pwd)
part=${2:-all}
here=$(cd "$(dirname "$0")" && pwd); src=$(cd "$here/../.." && pwd)
# shellcheck source=../lib/sim_platform.sh
source "$here/../lib/sim_platform.sh"
out=$here/raw; mkdir -p "$out"
unset SCALEPROBE_EXP_RING_CALLS
echo "# start ($part) $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model $(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2)"
echo "# git $(git -C "$src" rev-parse --short HEAD) $(smpirun -version 2>&1 | head -1)"

# The experiment's binary: this revision plus ring-exchange-experiment.patch, built in /tmp.
exp=/tmp/scaleprobe-ring-exchange
rm -rf $exp && mkdir -p $exp && git -C "$src" archive HEAD | tar -x -C $exp &&
  patch -s -d $exp -p1 < "$here/ring-exchange-experiment.patch" &&
  (cd $exp && cmake --preset smpi > /dev/null && nice -n 5 cmake --build build/smpi -j2 --target bucket_sweep > /dev/null) &&
  echo "# built $exp/build/smpi/bin/bucket_sweep $(date -u +%FT%TZ)"
xbin=$exp/build/smpi/bin/bucket_sweep

for nodes in 32 64 128; do  # the platform and host file scripts/simulate writes (its run itself left out)
  sim_platform "$src/scripts/simulate" "$out/platform-$nodes" "$nodes" "$build"
done
cp -r "$out/platform-32" "$out/platform-32-nobackbone"
sed -i 's/ bb_bw="[^"]*" bb_lat="0s"//' "$out/platform-32-nobackbone/platform.xml"

# run NAME [cfg...]; from the caller: nodes (hosts), iters, bin, mode (SCALEPROBE_EXP_RING_CALLS or
# empty), flags (smpirun flags), dir (platform folder), prefix (a command to run smpirun under)
nodes=32 iters=1 bin=$build/bin/bucket_sweep mode="" flags="" dir=$out/platform-32 prefix=""
run() {
  local name=$1; shift
  local cfg=("${base_cfg[@]}" "$@")
  env ${mode:+SCALEPROBE_EXP_RING_CALLS=$mode} SCALEPROBE_SIM_PLATFORM="flat cluster: $nodes nodes x 8 ranks ($name)" \
    /usr/bin/time -f "$name: %U s user, %S s system, %e s real, %M KiB max RSS" $prefix \
    smpirun $flags -np $((nodes * 8)) -platform "$dir/platform.xml" -hostfile "$dir/hostfile" "${cfg[@]/#/--cfg=}" \
    --log=root.thres:warning --log=smpi_config.thres:error "$bin" --layout resnet50 -c all \
    -a ring -n $iters -w 0 -o "$out/$name.h5" > "$out/$name.log" 2>&1
  echo "$name: ranks $((nodes * 8)) iterations $iters exit $?"; grep -E '^ +ring ' "$out/$name.log"; tail -1 "$out/$name.log"
  rm -f "$out/$name.h5"
}
twice() { local name=$1; shift; run $name-1 "$@"; run $name-2 "$@"; }

if [ "$part" = all ]; then
twice r256-base
iters=2; twice r256-base-n2; iters=1
for f in ucontext boost thread; do twice r256-factory-$f contexts/factory:$f; done
for s in 128 64; do twice r256-stack-$s contexts/stack-size:$s; done
twice r256-guard-0 contexts/guard-size:0
for p in dlopen mmap; do twice r256-privatization-$p smpi/privatization:$p; done
flags=-no-privatize; twice r256-no-privatize; iters=2; twice r256-no-privatize-n2; iters=1; flags=""
twice r256-blocksize-2M smpi/shared-malloc-blocksize:2097152
huge=/tmp/scaleprobe-hugetlbfs; pages=$(cat /proc/sys/vm/nr_hugepages)
mkdir -p $huge && mount -t hugetlbfs none $huge && sysctl -q vm.nr_hugepages=128 &&
  echo "# hugetlbfs at $huge, $(grep HugePages_Total /proc/meminfo)"
hp=(smpi/shared-malloc-blocksize:2097152 "smpi/shared-malloc-hugepage:$huge")
twice r256-hugepage "${hp[@]}"
iters=2; twice r256-hugepage-n2 "${hp[@]}"; iters=1
bin=$xbin mode=sendrecv; twice r256-hugepage-sendrecv "${hp[@]}"; bin=$build/bin/bucket_sweep mode=""
umount $huge; rmdir $huge; sysctl -q vm.nr_hugepages=$pages
echo "# hugetlbfs unmounted, vm.nr_hugepages $(cat /proc/sys/vm/nr_hugepages), $(mount | grep -c hugetlbfs) hugetlbfs mounts"
twice r256-optim-full network/optim:Full
run r256-selective-update-no network/maxmin-selective-update:no
twice r256-cpu-threshold-inf smpi/cpu-threshold:-1
dir=$out/platform-32-nobackbone; twice r256-no-backbone; iters=2; twice r256-no-backbone-n2; iters=1; dir=$out/platform-32

bin=$xbin
twice r256-patched-original-calls
for mode in sendrecv waitall; do twice r256-$mode; iters=2; twice r256-$mode-n2; iters=1; done
mode=sendrecv flags=-no-privatize; twice r256-no-privatize-sendrecv; iters=2; twice r256-no-privatize-sendrecv-n2; iters=1

nodes=64 dir=$out/platform-64
for it in 1 2; do
  iters=$it
  bin=$build/bin/bucket_sweep mode="" flags=""; run r512-base-n$it
  bin=$xbin mode=sendrecv flags=""; run r512-sendrecv-n$it
  bin=$xbin mode=sendrecv flags=-no-privatize; run r512-no-privatize-sendrecv-n$it
done

# Where one ring's CPU goes: 256 ranks, base, five iterations, the run's second half.
nodes=32 dir=$out/platform-32 iters=5 bin=$build/bin/bucket_sweep mode="" flags=-keep-temps
temps=/tmp/scaleprobe-smpi-temps; rm -rf $temps; mkdir -p $temps
TMPDIR=$temps prefix="perf record -q -g -F 300 -o /tmp/scaleprobe-perf-r256-n5.data" run r256-base-n5-perf
{
  echo "# perf record -F 300 of r256-base-n5-perf, samples in the second half of the run (--time 50%-100%)"
  echo "## by library (bucket_sweep's 256 privatised copies summed)"
  perf report -i /tmp/scaleprobe-perf-r256-n5.data --no-children --sort dso --stdio -g none --time 50%-100% 2>/dev/null |
    grep '%' | grep -v Samples | awk '{gsub("%", "", $1); if ($2 ~ /^bucket_sweep_/) own += $1; else if ($1 >= 0.1) printf "%6.2f %% %s\n", $1, $2}
      END {printf "%6.2f %% bucket_sweep (its privatised copies summed)\n", own}'
  echo "## top symbols (the program's copies summed per symbol)"
  perf report -i /tmp/scaleprobe-perf-r256-n5.data --no-children --sort dso,symbol --stdio -g none --time 50%-100% 2>/dev/null |
    grep '%' | grep -v Samples | awk '{v=$1; gsub("%", "", v); d=$2; if (d ~ /^bucket_sweep_/) d="bucket_sweep"; $1=""; $2="";
      s[d " " $0]+=v} END {for (k in s) printf "%6.2f %% %s\n", s[k], k}' | sort -rn | head -40
  echo "## callers of the kernel's CPU-clock reads (clock_gettime of a CPU-time clock is a system call)"
  perf report -i /tmp/scaleprobe-perf-r256-n5.data --children --sort symbol --stdio -g none --time 50%-100% 2>/dev/null |
    grep -E 'clock_gettime|posix_cpu_clock_get|do_syscall_64' | awk '{print $1, $2, $4, $5}'
} > "$out/perf-r256-n5.txt"
rm -rf $temps /tmp/scaleprobe-perf-r256-n5.data
prefix="" flags="" iters=1

nodes=128 dir=$out/platform-128 bin=$xbin mode=sendrecv flags=-no-privatize
run r1024-no-privatize-sendrecv
fi

if [ "$part" = verify ]; then
  head -16 "$out/platform-32/hostfile" > "$out/hostfile-16"
  for mode in "" sendrecv; do
    name=r16-verified-${mode:-unset-original-calls}
    env ${mode:+SCALEPROBE_EXP_RING_CALLS=$mode} SCALEPROBE_SIM_PLATFORM="flat cluster: 2 nodes x 8 ranks ($name)" \
      /usr/bin/time -f "$name: %U s user, %S s system, %e s real, %M KiB max RSS" \
      smpirun -np 16 -platform "$out/platform-32/platform.xml" -hostfile "$out/hostfile-16" "${base_cfg[@]/#/--cfg=}" \
      --log=root.thres:warning --log=smpi_config.thres:error "$xbin" --layout resnet50 -c 1,25,all \
      -a ring -n 1 -w 0 -o "$out/$name.h5" > "$out/$name.log" 2>&1
    echo "$name: ranks 16 iterations 1 exit $?"; grep -E '^ +ring |#wrong' "$out/$name.log"; tail -1 "$out/$name.log"
    rm -f "$out/$name.h5"
  done
fi

if [ "$part" = original ]; then
  bin=$xbin mode="" flags="" prefix=""
  nodes=32 dir=$out/platform-32; twice r256-unset-original-calls; iters=2; twice r256-unset-original-calls-n2; iters=1
  nodes=64 dir=$out/platform-64; run r512-unset-original-calls-n1; iters=2; run r512-unset-original-calls-n2; iters=1
fi

if [ "$part" = all ] || [ "$part" = repeat512 ]; then
nodes=64 dir=$out/platform-64 flags="" prefix=""
for it in 1 2; do
  iters=$it
  bin=$build/bin/bucket_sweep mode=""; run r512-base-n$it-again
  bin=$xbin mode=""; run r512-patched-original-calls-n$it
  bin=$xbin mode=sendrecv; run r512-sendrecv-n$it-again
done
fi
rm -rf $exp
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
