// CPU compute kernels for the GPT trainer, in the style of karpathy/llm.c train_gpt2.c:
// plain <layer>_forward / <layer>_backward free functions over contiguous row-major float32
// arrays, shapes documented at each declaration.
//
// Conventions shared by every kernel in sp::kernels:
//  - Names: B batch, T sequence length, C channels, OC output channels, NH heads, V vocab size.
//    Dimensions are int (they are small and cBLAS takes int); index products are size_t.
//  - Gradients are named d<tensor> and ACCUMULATE: every backward does `dx += ...` and never
//    overwrites, so a tensor that feeds two consumers (e.g. the residual stream) just gets both
//    contributions. The caller zeroes gradient buffers once per step, before the backward pass.
//  - Inputs and outputs of a call must not alias unless the declaration says so.
//  - No argument checking beyond debug asserts; sizes and pointers are the caller's contract.
//  - OpenMP parallelises over rows (B*T) or over B*NH; results do not depend on the thread
//    count except where a comment says otherwise and in the GEMMs of oneDNN, the default GEMM
//    library, whose blocking rounds differently for different thread counts (gemm.hpp).
//
// One header per family, all included here:
#pragma once

#include "kernels/attention.hpp"     // causal multi-head self-attention
#include "kernels/blas.hpp"          // set_blas_threads and the BLAS thread-pool rules
#include "kernels/cnn.hpp"           // conv2d, batch norm, ReLU, pooling (ResNet)
#include "kernels/crossentropy.hpp"  // fused softmax + cross-entropy
#include "kernels/gemm.hpp"          // sgemm: every GEMM, in OpenBLAS or oneDNN
#include "kernels/layers.hpp"        // encoder, layernorm, gelu, residual
#include "kernels/matmul.hpp"        // linear layer through sgemm
#include "kernels/optim.hpp"         // AdamW, SGD with momentum
