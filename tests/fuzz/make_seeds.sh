#!/usr/bin/env bash
# Remakes the seed corpora of tests/fuzz/corpus from this build's binaries (the fuzz preset's
# are fine): real traces and checkpoints of tiny models, h5_builder programs describing valid
# files (h5_builder.hpp), and CIFAR-10 records. The text seeds (fuzz_cli_lists, fuzz_layout)
# are written by hand and not touched here.
#   tests/fuzz/make_seeds.sh BUILD_DIR
set -euo pipefail
build=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
corpus=$here/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
export ASAN_OPTIONS=detect_leaks=0 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
cd "$tmp"

# The models the checkpoint fuzzers load into (fuzz_gpt_checkpoint.cpp, fuzz_resnet_checkpoint.cpp).
"$build/trainers/gpt/gpt_train" --vocab 256 --context 4 --width 8 --depth 1 --heads 2 --steps 2 --batch 1 \
  --synthetic-bytes 4096 --save gpt.h5 -o gpt-trace.h5 -q > /dev/null
"$build/trainers/resnet/resnet_train" --depth 8 --width 2 --steps 2 --batch 2 --synthetic-images 64 \
  --synthetic-test 16 --val-images 16 --save resnet.h5 -o resnet-trace.h5 -q > /dev/null
mpirun --oversubscribe -np 2 "$build/collectives/allreduce_perf" --sizes 8,64 -n 2 -w 1 -o allreduce.h5 -q > /dev/null
cp gpt.h5 "$corpus/fuzz_gpt_checkpoint/gpt-train-step2.h5"
cp resnet.h5 "$corpus/fuzz_resnet_checkpoint/resnet-train-step2.h5"
cp gpt-trace.h5 "$corpus/fuzz_trace_reader/gpt-train.h5"
cp resnet-trace.h5 "$corpus/fuzz_trace_reader/resnet-train.h5"
cp allreduce.h5 "$corpus/fuzz_trace_reader/allreduce-np2.h5"

/usr/bin/python3 - "$corpus" <<'PY'
import random, struct, sys
corpus = sys.argv[1]
def put(target, name, data):
    open(f"{corpus}/{target}/{name}", "wb").write(bytes(data))
GROUP, ATTR, DSET, ROOT, TENSORS, GROUP_OBJECT, ATTR_RAW = 0, 1, 2, 3, 4, 5, 6
I64, F64, FSTR = 0, 3, 5
SCALAR, N2 = 0, 2
def raw(v): return list(struct.pack("<q", v))
# A valid two-rank trace (names and strings index fuzz_trace_reader.cpp's vocabulary).
trace = [ATTR, 0, FSTR, SCALAR, 0,   ATTR, 1, I64, SCALAR, 1,   ATTR, 2, I64, SCALAR, 1,
         ATTR, 3, FSTR, SCALAR, 3,   ATTR, 4, I64, SCALAR, 2,
         GROUP, 5, ATTR, 15, FSTR, SCALAR, 7,   ROOT,
         GROUP, 11, ATTR, 6, FSTR, SCALAR, 1,   ATTR, 7, I64, SCALAR, 2,
         DSET, 8, I64, N2, 0,   DSET, 13, F64, N2, 9,   ATTR, 9, FSTR, SCALAR, 4,   DSET, 14, FSTR, N2, 7]
put("fuzz_trace_reader", "built-per-rank-table", trace)
put("fuzz_trace_reader", "built-shared-table", trace[:33] + [GROUP, 12, ATTR, 6, FSTR, SCALAR, 2, ATTR, 7, I64, SCALAR, 1,
                                                            DSET, 13, F64, 1, 9])
# A valid GPT checkpoint of the fuzzer's model (V 256, T 4, C 8, L 1, NH 2).
gpt = [ATTR, 0, FSTR, SCALAR, 0,  ATTR, 1, I64, SCALAR, 1,  ATTR, 2, FSTR, SCALAR, 1,
       ATTR_RAW, 3, I64, SCALAR] + raw(256) + [ATTR, 4, I64, SCALAR, 5,  ATTR, 5, I64, SCALAR, 6,
       ATTR, 6, I64, SCALAR, 1,  ATTR, 7, I64, SCALAR, 2,
       GROUP, 9, TENSORS, 0,  GROUP, 10, TENSORS, 0, ATTR, 15, I64, SCALAR, 3,
       GROUP, 11, ATTR, 16, I64, SCALAR, 2, ATTR, 17, I64, SCALAR, 1, ATTR, 18, I64, SCALAR, 1,
       ATTR, 19, I64, SCALAR, 2, ATTR, 20, FSTR, SCALAR, 2, ATTR, 21, FSTR, SCALAR, 4]
put("fuzz_gpt_checkpoint", "built-valid", gpt)
# A valid ResNet checkpoint of the fuzzer's model (3 stages, depth 8, width 2, 10 classes).
resnet = [ATTR, 0, FSTR, SCALAR, 0,  ATTR, 1, I64, SCALAR, 1,  ATTR, 2, FSTR, SCALAR, 1,
          ATTR, 3, I64, SCALAR, 3,  ATTR, 4, I64, SCALAR, 6,  ATTR, 5, I64, SCALAR, 2,
          ATTR, 6, I64, SCALAR, 7,  ATTR, 7, I64, SCALAR, 3,  ATTR, 8, I64, SCALAR, 1,
          GROUP, 10, TENSORS, 0,  GROUP, 11, TENSORS, 0, ATTR, 14, I64, SCALAR, 2,
          GROUP, 12, ATTR, 15, I64, SCALAR, 2, ATTR, 16, I64, SCALAR, 1, ATTR, 17, I64, SCALAR, 1,
          ATTR, 18, I64, SCALAR, 2, ATTR, 19, I64, SCALAR, 0, ATTR, 20, FSTR, SCALAR, 2, ATTR, 21, FSTR, SCALAR, 4]
put("fuzz_resnet_checkpoint", "built-valid", resnet)
# CIFAR-10 records: 1 label byte + 3072 pixel bytes.
rng = random.Random(14)
def records(labels): return b"".join(bytes([l]) + bytes(rng.randrange(256) for _ in range(3072)) for l in labels)
put("fuzz_cifar", "one-record.bin", records([3]))
put("fuzz_cifar", "three-records.bin", records([0, 9, 5]))
PY
ls -l "$corpus"/*/
