// A GPT-2 model on the sp::kernels CPU kernels, in the style of llm.c's train_gpt2.c: one flat
// float buffer each for parameters, gradients, AdamW moments and activations, carved into named
// tensors, and plain gpt_forward / gpt_backward / gpt_zero_grad / gpt_update functions.
//
// Architecture (GPT-2): learned token (wte) + position (wpe) embeddings; L pre-LayerNorm blocks
//   x = x + attn.c_proj(causal_mha(attn.c_attn(ln_1(x))))
//   x = x + mlp.c_proj(gelu(mlp.c_fc(ln_2(x))))            (MLP width 4C, tanh GELU)
// then ln_f and the LM head, tied to wte as in GPT-2: logits = ln_f(x) · wte^T (no bias), or with
// --untied-head its own matrix lm_head.weight [V, C] (last in the buffer, as PyTorch registers it).
// No dropout.
//
// Parameter layout. Tensors are named as in the GPT-2 PyTorch module (HF GPT2LMHeadModel /
// nanoGPT: "transformer.wte.weight", "transformer.h.0.attn.c_attn.weight", ...) and appear in
// the buffer in PyTorch's named_parameters() (registration) order, each contiguous, row-major.
// Linear weights use the nn.Linear layout [out_features, in_features] (what matmul_forward
// takes); HF's GPT-2 uses Conv1D whose weights are the transpose, [in, out]. The gradient
// buffer has exactly the same layout, so a data-parallel engine can allreduce it as one buffer
// or bucket it (gpt_gradient_layout()). The tied lm_head is not a separate tensor
// (ParamView::lm_head then points at wte).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/buckets.hpp"
#include "trainers/common/flat_buffer.hpp"
#include "trainers/common/tensor_table.hpp"
#include "trainers/dp/shard.hpp"

namespace sp::gpt {

struct GPTConfig {
  std::string name = "custom";
  int vocab_size = 256;      // V: token ids are in [0, V)
  int max_seq_len = 128;     // maxT: context length (rows of wpe)
  int channels = 256;        // C: model width
  int num_layers = 4;        // L
  int num_heads = 4;         // NH: must divide C
  bool tied_lm_head = true;  // false: the LM head is its own tensor "lm_head.weight" [V, C]
};

// "gpt-micro" (tests: V 128, maxT 16, C 32, L 2, NH 4), "gpt-tiny" (V 256 byte-level, maxT 128,
// C 256, L 4, NH 4), "gpt-mini" (V 256, maxT 256, C 384, L 6, NH 6). Throws sp::Error if unknown.
GPTConfig gpt_preset(std::string_view name);
std::vector<std::string> gpt_preset_names();
// Throws sp::Error with a one-line message naming the first problem (e.g. heads not dividing
// the width, a non-positive size, an absurdly large model).
void gpt_validate(const GPTConfig& config);

struct GPT;
using train::TensorInfo;
using train::TensorTable;
// Derived from the model's one description of its tensors (gpt_parameters / gpt_activations in
// model.cpp, on trainers/common/tensor_table.hpp): the parameter table in buffer order (=
// named_parameters() order), its size, and the floats of the activation buffer for batch B and
// length T (gpt_forward allocates this twice: activations and their gradients).
std::vector<TensorInfo> gpt_parameter_table(const GPTConfig& config);
std::size_t gpt_num_parameters(const GPTConfig& config);
std::size_t gpt_activation_numel(const GPTConfig& config, int B, int T);

// Pointers into the flat parameter (or gradient) buffer. Per-layer tensors are indexed by layer.
struct ParamView {
  float* wte = nullptr;  // [V, C]
  float* wpe = nullptr;  // [maxT, C]
  struct Layer {
    float *ln1w, *ln1b;          // [C], [C]
    float *qkvw, *qkvb;          // [3C, C], [3C]    attn.c_attn
    float *attprojw, *attprojb;  // [C, C], [C]      attn.c_proj
    float *ln2w, *ln2b;          // [C], [C]
    float *fcw, *fcb;            // [4C, C], [4C]    mlp.c_fc
    float *fcprojw, *fcprojb;    // [C, 4C], [C]     mlp.c_proj
  };
  std::vector<Layer> h;
  float* lnfw = nullptr;     // [C]
  float* lnfb = nullptr;     // [C]
  float* lm_head = nullptr;  // [V, C]: wte when tied
};

// Activations of one forward pass at batch B and sequence length T (all [B, T, ...] row-major),
// carved from one allocation. Per-layer arrays are indexed by layer.
struct ActivationView {
  float* encoded;  // [B, T, C]   wte + wpe
  struct Layer {
    float *ln1, *ln1_mean, *ln1_rstd;  // [B,T,C], [B,T], [B,T]
    float* qkv;                        // [B, T, 3C]
    float* atty;                       // [B, T, C]    attention output before c_proj
    float* att;                        // [B, NH, T, T] softmax probabilities
    float* residual2;                  // [B, T, C]    x + attn.c_proj(atty)
    float *ln2, *ln2_mean, *ln2_rstd;  // [B,T,C], [B,T], [B,T]
    float *fch, *fch_gelu;             // [B, T, 4C]   c_fc's output, then GELU's slope there; GELU
    float* residual3;                  // [B, T, C]    block output: residual2 + mlp.c_proj(...)
  };
  std::vector<Layer> h;
  float *lnf, *lnf_mean, *lnf_rstd;  // [B,T,C], [B,T], [B,T]
  float *logits, *probs;             // [B, T, V]
  float* losses;                     // [B, T]
};

// A pipeline stage's part of the model (trainers/gpt/pipeline_*.hpp): blocks [first, end), with
// the embeddings when first == 0 and ln_f, the LM head and the loss when end == num_layers. The
// whole model is gpt_all_layers; gpt_forward and gpt_backward run it through the same functions.
struct LayerRange {
  int first = 0, end = 0;
  bool has_embedding() const { return first == 0; }
  bool has_head(const GPTConfig& c) const { return end == c.num_layers; }
};
LayerRange gpt_all_layers(const GPTConfig& config);

// The activations of a layer range for one micro-batch of B x T rows, in the whole model's order:
// the range's own and, when first > 0, its input h.<first-1>.residual_3 (the previous stage's
// output, received into it). Views of the other layers are null.
std::size_t gpt_activation_numel(const GPTConfig& config, int B, int T, LayerRange range);
ActivationView gpt_activation_view(const GPTConfig& config, int B, int T, LayerRange range, float* buffer);
// The activation gradients gpt_backward_layers needs: one block's buffers, which every layer of the
// range views (the backward uses a block's only while it runs, and updates the residual stream's
// gradient in place), and the head's; so their memory does not grow with the depth.
std::size_t gpt_gradient_numel(const GPTConfig& config, int B, int T, LayerRange range);
ActivationView gpt_gradient_view(const GPTConfig& config, int B, int T, LayerRange range, float* buffer);
// The parameter tensors (indices into GPT::tensors) a range reads and updates: its blocks, wte and
// wpe with the embedding, ln_f with the head, and the head's weight (wte itself when tied).
std::vector<std::size_t> gpt_range_tensors(const GPT& model, LayerRange range);

struct GPT {
  GPTConfig config;
  std::vector<TensorInfo> tensors;        // buffer layout of params, grads, m, v
  std::vector<std::size_t> block_offset;  // first parameter of each block (its table group)
  std::size_t num_parameters = 0;
  std::vector<float> params;  // one allocation, [num_parameters]
  train::FlatBuffer grads;    // same layout; zero after gpt_zero_grad (gpt_move_gradients)
  // AdamW first/second moments: empty until the first update or a checkpoint's load (then zeros or
  // the checkpoint's, in the buffer layout), or this rank's shard only under --shard.
  std::vector<float> m, v;
  ParamView p, g;      // named views of params and grads
  long adam_step = 0;  // AdamW updates done so far

  // Activations and their gradients (gpt_gradient_view) for the current B, T; (re)allocated by
  // gpt_forward when B*T grows.
  int B = 0, T = 0;
  std::vector<float> acts, grad_acts;
  ActivationView a, ga;
  std::vector<int> inputs, targets;  // [B, T] copies from the last forward
  bool have_targets = false;
  double mean_loss = 0;  // mean over B*T of the last forward with targets (-1 without)
};

// Allocates the buffers of a validated config; parameters are initialised as GPT-2 does:
// weights N(0, 0.02), the two residual projections (attn.c_proj, mlp.c_proj) N(0, 0.02/sqrt(2L)),
// biases 0, LayerNorm gains 1. Deterministic for a seed (own normal sampler, platform-independent).
GPT gpt_create(const GPTConfig& config, std::uint64_t seed);
void gpt_init_parameters(GPT& model, std::uint64_t seed);

// inputs, targets: [B, T] token ids in [0, V), 1 <= T <= maxT. targets may be nullptr (no loss;
// mean_loss = -1). Fills the activations (logits [B, T, V] in model.a.logits) and returns the
// mean cross-entropy loss (accumulated in double).
// params_needed (optional), the data-parallel engine's hook: called before the embeddings, each
// block and ln_f with the end of the parameters they read (every parameter at a buffer offset
// below it must be final on return: under --shard the engine completes their all-gather there),
// and between a block's kernels with the same end (the engine moves the rest on).
double gpt_forward(GPT& model, const int* inputs, const int* targets, int B, int T,
                   const std::function<void(std::size_t)>& params_needed = {});
// Gradients of the mean loss of the last gpt_forward (which must have had targets), ADDED to
// model.grads (call gpt_zero_grad first; accumulating over micro-batches is allowed).
// on_grads_ready (optional), the data-parallel engine's hook: called with an offset each time
// every gradient at buffer offset >= it is final (after ln_f, after each block from the last,
// and 0 at the end), so bucket allreduces can start while backward goes on; also between a
// block's matmuls with the offset unchanged, so the engine can move the allreduces in flight on.
void gpt_backward(GPT& model, const std::function<void(std::size_t)>& on_grads_ready = {});
// A layer range's forward over one micro-batch's activations a (gpt_activation_view): from the
// tokens `inputs` when the range has the embedding, else from a.h[first-1].residual3 (filled by
// the caller). Returns the mean loss when the range has the head and targets is not null, else -1.
double gpt_forward_layers(const GPT& model, LayerRange range, const ActivationView& a, const int* inputs,
                          const int* targets, int B, int T, const std::function<void(std::size_t)>& params_needed = {});
// Its backward, ADDING the range's parameter gradients to model.grads. ga: the activation
// gradients (gpt_gradient_view). Without the head the caller puts the gradient of the range's
// output in ga.h[end-1].residual3; that buffer is the residual stream's gradient, updated in place
// from the last block to the first, so on return it holds the gradient of the range's input
// (what a pipeline stage sends back). on_grads_ready as gpt_backward's.
void gpt_backward_layers(GPT& model, LayerRange range, const ActivationView& a, const ActivationView& ga,
                         const int* inputs, const int* targets, int B, int T,
                         const std::function<void(std::size_t)>& on_grads_ready = {});
void gpt_zero_grad(GPT& model);
// Moves model.grads to home (num_parameters floats, outliving the model's use of it: the
// data-parallel engine's node segment) and points the named views there.
void gpt_move_gradients(GPT& model, float* home);
// Global L2 norm of the gradient buffer (accumulated in double).
double gpt_grad_norm(const GPT& model);
// Multiplies the gradients by max_norm / norm when norm > max_norm; returns the norm before. (The
// trainers leave the factor to AdamW instead: train::grad_norm, train::clip_scale.)
double gpt_clip_grad_norm(GPT& model, double max_norm);

struct AdamWParams {
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f, weight_decay = 0.1f;
  float grad_scale = 1.0f;  // gradient clipping's factor, applied as AdamW reads each gradient
};
// One AdamW step over every tensor (decay only on weight_decay tensors); increments adam_step.
// With a shard: over its elements only, m and v holding its state (trainers/dp/shard.hpp).
void gpt_update(GPT& model, const AdamWParams& opt);
void gpt_update(GPT& model, const AdamWParams& opt, const dp::ParameterShard& shard);
// AdamW over the given tensors only (indices into model.tensors, e.g. gpt_range_tensors), their
// state at their own offsets in buffer-sized moments: a pipeline stage's update of its layers.
void gpt_update_tensors(GPT& model, const AdamWParams& opt, const std::vector<std::size_t>& tensors);

// The gradient layout for bucketing (tensor names and sizes in forward order), to build
// sp::coll::pack_buckets on. The flat gradient buffer holds the tensors in this order.
sp::coll::GradientLayout gpt_gradient_layout(const GPT& model);

}  // namespace sp::gpt
