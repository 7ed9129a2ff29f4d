#!/bin/bash
# Issue 28: gpt-tiny (batch 8, one rank) before and after layer norm's row loops get an AVX-512
# variant and its backward's dx and parameter-sum loops become one. Per pass and thread count
# (1, 2): the base build's gpt_train, the new build's, then the PyTorch peer (its OpenBLAS on the
# core the trainer chose), 12 steps each, the order of base and new alternating per pass.
#   bash measure.sh BASE_BUILD NEW_BUILD PASSES > measure.log
set -u
# shellcheck source=../lib/base_new.sh
source "$(dirname "$0")/../lib/base_new.sh"
base_new_campaign gpt "$0" "$@"
