#!/usr/bin/env bash
# Crafted and damaged traces and checkpoints are refused with one line (exit 1), never a crash or
# a silent success: one flipped byte anywhere (metadata too) or a truncated file (the whole-file
# digest, checked before libhdf5 opens the file), array-shaped attributes, a column of the wrong
# type, a missing rank column, a table too large for memory, 4 bytes overwritten inside a data
# block under a re-stamped digest (Fletcher32); an old stored trace (schema version 1, no digest
# and no checksums) still passes trace_check; a checkpoint without its user block is read in an
# isolated child (core/trace/h5_open.hpp): refused at format 3, loaded at the older format 2.
# Usage: safe_reads.sh <allreduce_perf> <trace_check> <gpt_train> <resnet_train> <source dir>
set -u
A=$1 C=$2 G=$3 R=$4 src=$5
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/expect_error.sh
source "$here/../lib/expect_error.sh"
craft() { PYTHONPATH="$here/../../python" /usr/bin/python3 "$here/craft_h5.py" "$@" >/dev/null; }
expect_ok() {  # <text stdout must contain> <command...>
  local pattern=$1; shift
  checks=$((checks + 1))
  if ! "$@" >"$tmp/out" 2>"$tmp/err" || ! grep -qF -- "$pattern" "$tmp/out"; then
    echo "FAIL: '$*' failed or lacks '$pattern':"; sed 's/^/    /' "$tmp/out" "$tmp/err"; failures=$((failures + 1))
  fi
}

# A fresh trace carries a digest and checksums, and trace_check verifies them.
"$A" --sizes 8,4K -n 3 --no-membw -q -o "$tmp/t.h5" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
expect_ok " digest=crc32 verified checksums=" "$C" "$tmp/t.h5"
expect_ok " ranks=1 tables: phases=1 ranks=1 samples=" "$C" "$tmp/t.h5"
variant() { cp "$tmp/t.h5" "$tmp/$1.h5"; echo "$tmp/$1.h5"; }

# One flipped byte anywhere: the digest block, the superblock, metadata, data, the last byte.
# flip_each FILE EXPECTED COMMAND...: for each offset, flip the byte, expect the one-line error
# (which also says "corrupt"), flip it back. FLIP_OFFSETS: the offsets (a fraction of the size
# for those with a slash: "1/3" is a third of the way).
flip_byte() {  # FILE OFFSET: invert the lowest bit of one byte
  local b; b=$(od -An -tu1 -j "$2" -N1 "$1")
  printf "\\$(printf %03o $((b ^ 1)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
flip_each() {
  local file=$1 expected=$2 at; shift 2
  local size; size=$(stat -c %s "$file")
  for at in $FLIP_OFFSETS; do
    [[ $at == */* ]] && at=$((size * ${at%/*} / ${at#*/}))
    ((at < 0)) && at=$((size + at))
    flip_byte "$file" $at
    expect_error "$expected" "$@"
    grep -q corrupt "$tmp/err" || { echo "FAIL: byte $at flipped: no 'corrupt' in: $(cat "$tmp/err")"; failures=$((failures + 1)); }
    flip_byte "$file" $at
  done
  expect_ok "" "$@"  # restored: the flips were the only damage
}
FLIP_OFFSETS="0 30 511 512 520 600 1024 2048 4096 1/3 1/2 4/5 -1"
f=$(variant onebyte); flip_each "$f" "$f: " "$C" "$f"
f=$(variant truncated); truncate -s -1 "$f"
expect_error "$f: corrupt: truncated" "$C" "$f"
f=$(variant truncated_half); truncate -s $(($(stat -c %s "$f") / 2)) "$f"
expect_error "$f: corrupt: truncated" "$C" "$f"

# 4 bytes overwritten inside the data of a column (the largest one, and the per-rank samples):
# caught by the digest, and with the digest re-stamped over them by the column's Fletcher32.
f=$(variant flipped); craft flip "$f"
expect_error "$f: corrupt: whole-file crc32" "$C" "$f"
craft restamp "$f"
expect_error "fails its Fletcher32 checksum (corrupt)" "$C" "$f"
f=$(variant flipped_rank); craft flip "$f" samples/rank; craft restamp "$f"
expect_error "table 'samples' column 'rank': data fails its Fletcher32 checksum (corrupt)" "$C" "$f"

# Array-shaped attributes where one value is read (the old reader wrote past its buffer).
f=$(variant kind_array); craft array-attr "$f" / kind str 64
expect_error "attribute 'kind' of / holds 64 values, expected one" "$C" "$f"
f=$(variant nranks_array); craft array-attr "$f" / nranks int 64
expect_error "attribute 'nranks' of / holds 64 values, expected one" "$C" "$f"
f=$(variant rows_array); craft array-attr "$f" /summary rows int 64
expect_error "attribute 'rows' of /summary holds 64 values" "$C" "$f"
f=$(variant unit_array); craft array-attr "$f" /samples/wall_s unit str 64
expect_error "attribute 'unit' of /samples/wall_s holds 64 values" "$C" "$f"
f=$(variant answer_array); craft array-attr "$f" / answer float 64
expect_error "attribute 'answer' of / holds 64 values" "$C" --attribute answer "$f"

# A column of the wrong type, a missing rank column, a table larger than memory.
f=$(variant rank_float); craft retype "$f" samples/rank float
expect_error "table 'samples' column 'rank' is float, expected integer" "$C" "$f"
f=$(variant rank_missing); craft drop "$f" samples/rank
expect_error "table 'samples' has no 'rank' column" "$C" "$f"
f=$(variant huge); craft huge "$f" huge
expect_error "out of memory" "$C" "$f"

# Old traces (schema version 1, before digests and checksums) are still read.
old=$src/tests/data/schema1-allreduce.h5
expect_ok "no digest (older format) no checksum (schema version 1)" "$C" "$old"

# Checkpoints of both trainers: a damaged tensor or an array-shaped attribute fails the load.
G2="$G -m gpt-micro -B 2 --synthetic-bytes 20000 -q -o $tmp/g.h5"
R2="$R --depth 8 --width 4 -B 4 --synthetic-images 64 --synthetic-test 16 -q -o $tmp/r.h5"
for trainer in gpt resnet; do
  if [ $trainer = gpt ]; then T=$G2 tensor=model/transformer.wte.weight; else T=$R2 tensor=model/layer3.0.conv2.weight; fi
  $T -s 2 --save "$tmp/$trainer.ck.h5" >/dev/null 2>"$tmp/err" || { echo "FAIL: no $trainer checkpoint:"; cat "$tmp/err"; exit 1; }
  expect_ok "" $T -s 3 --resume "$tmp/$trainer.ck.h5"
  # Without its user block (no digest): read whole in an isolated child, then refused (format 3
  # needs a digest); as format version 2 (the older format, no digest) it loads from the copy the
  # child re-wrote, and the resumed run ends with the same parameters (their hash).
  tail -c +513 "$tmp/$trainer.ck.h5" >"$tmp/$trainer.strip.h5"
  expect_error "cannot load checkpoint '$tmp/$trainer.strip.h5': corrupt: format version 3 requires a whole-file digest" \
    $T -s 3 --resume "$tmp/$trainer.strip.h5"
  cp "$tmp/$trainer.strip.h5" "$tmp/$trainer.v2.h5"
  /usr/bin/python3 -c 'import h5py, sys; h5py.File(sys.argv[1], "r+").attrs["format_version"] = 2' "$tmp/$trainer.v2.h5"
  checks=$((checks + 1))
  from_ck=$($T -s 3 --resume "$tmp/$trainer.ck.h5" 2>&1 | grep -o "hash [0-9a-f]*")
  from_v2=$($T -s 3 --resume "$tmp/$trainer.v2.h5" 2>&1 | grep -o "hash [0-9a-f]*")
  if [ -z "$from_ck" ] || [ "$from_ck" != "$from_v2" ]; then
    echo "FAIL: $trainer resumed from the older-format checkpoint: parameters '$from_v2', wanted '$from_ck'"; failures=$((failures + 1))
  fi
  cp "$tmp/$trainer.ck.h5" "$tmp/$trainer.byte.h5"
  FLIP_OFFSETS="30 520 1/2" flip_each "$tmp/$trainer.byte.h5" "cannot load checkpoint '$tmp/$trainer.byte.h5': " $T -s 3 --resume "$tmp/$trainer.byte.h5"
  cp "$tmp/$trainer.ck.h5" "$tmp/$trainer.cut.h5"; truncate -s -100 "$tmp/$trainer.cut.h5"
  expect_error "cannot load checkpoint '$tmp/$trainer.cut.h5': corrupt: truncated" $T -s 3 --resume "$tmp/$trainer.cut.h5"
  cp "$tmp/$trainer.ck.h5" "$tmp/$trainer.flip.h5"; craft flip "$tmp/$trainer.flip.h5"
  expect_error "cannot load checkpoint '$tmp/$trainer.flip.h5': corrupt: whole-file crc32" $T -s 3 --resume "$tmp/$trainer.flip.h5"
  craft restamp "$tmp/$trainer.flip.h5"
  expect_error "fails its Fletcher32 checksum (corrupt)" $T -s 3 --resume "$tmp/$trainer.flip.h5"
  cp "$tmp/$trainer.ck.h5" "$tmp/$trainer.flip2.h5"; craft flip "$tmp/$trainer.flip2.h5" $tensor; craft restamp "$tmp/$trainer.flip2.h5"
  expect_error "cannot load checkpoint '$tmp/$trainer.flip2.h5': dataset '/$tensor': data fails its Fletcher32 checksum (corrupt)" \
    $T -s 3 --init-from "$tmp/$trainer.flip2.h5"
  cp "$tmp/$trainer.ck.h5" "$tmp/$trainer.attr.h5"; craft array-attr "$tmp/$trainer.attr.h5" / model_name str 64
  expect_error "attribute 'model_name' of / holds 64 values, expected one" $T -s 3 --resume "$tmp/$trainer.attr.h5"
  cp "$tmp/$trainer.ck.h5" "$tmp/$trainer.step.h5"; craft array-attr "$tmp/$trainer.step.h5" /train step int 64
  expect_error "attribute 'step' of /train holds 64 values, expected one" $T -s 3 --resume "$tmp/$trainer.step.h5"
done
# In a checkpoint even an attribute is checksummed (the digest; beneath it HDF5 1.8 object headers).
cp "$tmp/gpt.ck.h5" "$tmp/gpt.name.h5"; craft patch "$tmp/gpt.name.h5" gpt-micro gpt-mikro
expect_error "cannot load checkpoint '$tmp/gpt.name.h5': corrupt: whole-file crc32" $G2 -s 3 --resume "$tmp/gpt.name.h5"
craft restamp "$tmp/gpt.name.h5"
expect_error "cannot load checkpoint '$tmp/gpt.name.h5'" $G2 -s 3 --resume "$tmp/gpt.name.h5"
finish safe_reads
