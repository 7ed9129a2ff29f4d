#!/bin/bash
# Issue 28 item 4: ResNet-20 (batch 32, one rank) before and after every block's backward reuses
# the first block's two gradient buffers (15d122d) instead of writing its own. Per pass and thread
# count (1, 2): the base build's resnet_train, the new build's, then the PyTorch peer (its
# OpenBLAS on the core the trainer chose), 12 steps each, the order of base and new alternating
# per pass.
#   bash measure.sh BASE_BUILD NEW_BUILD PASSES > measure.log
set -u
# shellcheck source=../lib/base_new.sh
source "$(dirname "$0")/../lib/base_new.sh"
base_new_campaign resnet "$0" "$@"
