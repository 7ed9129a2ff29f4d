#include "trainers/gpt/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/run/error.hpp"
#include "core/run/random.hpp"
#include "kernels/kernels.hpp"
#include "trainers/common/optimizer_shard.hpp"

namespace sp::gpt {

namespace k = sp::kernels;

GPTConfig gpt_preset(std::string_view name) {
  if (name == "gpt-micro") return {"gpt-micro", 128, 16, 32, 2, 4};
  if (name == "gpt-tiny") return {"gpt-tiny", 256, 128, 256, 4, 4};
  if (name == "gpt-mini") return {"gpt-mini", 256, 256, 384, 6, 6};
  fail("unknown model '{}' (choose from gpt-micro, gpt-tiny, gpt-mini)", name);
}

std::vector<std::string> gpt_preset_names() { return {"gpt-micro", "gpt-tiny", "gpt-mini"}; }

void gpt_validate(const GPTConfig& c) {
  if (c.vocab_size < 2) fail("vocab size must be at least 2 (got {})", c.vocab_size);
  if (c.max_seq_len < 1) fail("context length must be at least 1 (got {})", c.max_seq_len);
  if (c.channels < 1) fail("width must be at least 1 (got {})", c.channels);
  if (c.num_layers < 1) fail("depth must be at least 1 layer (got {})", c.num_layers);
  if (c.num_heads < 1) fail("heads must be at least 1 (got {})", c.num_heads);
  if (c.channels % c.num_heads != 0) fail("heads ({}) must divide the width ({})", c.num_heads, c.channels);
  if (c.vocab_size > (1 << 24)) fail("vocab size {} is too large (at most 2^24)", c.vocab_size);
  if (c.max_seq_len > 65536) fail("context length {} is too large (at most 65536)", c.max_seq_len);
  if (c.channels > 65536) fail("width {} is too large (at most 65536)", c.channels);
  // Matrix dimensions go to cBLAS as int: keep every product well inside int range.
  double mlp = 4.0 * c.channels * c.channels;
  double emb = double(c.vocab_size) * c.channels;
  if (mlp > 2e9 || emb > 2e9) fail("model too large: a weight matrix exceeds 2^31 elements");
  if (double(gpt_num_parameters(c)) > 4e9) fail("model too large: more than 4e9 parameters");
}

namespace {

// The model's one description of its parameters: every tensor in buffer order (= PyTorch's
// named_parameters() order), with its shape; each block is a group (its first tensor is where the
// gradient-ready watermark moves when backward finishes the block). AdamW decays 2-D tensors.
ParamView gpt_parameters(const GPTConfig& c, TensorTable& t) {
  const std::int64_t V = c.vocab_size, maxT = c.max_seq_len, C = c.channels;
  auto param = [&](const std::string& name, std::vector<std::int64_t> shape) {
    const bool decay = shape.size() >= 2;
    return t.add(name, std::move(shape), decay);
  };
  ParamView v;
  v.wte = param("transformer.wte.weight", {V, C});
  v.wpe = param("transformer.wpe.weight", {maxT, C});
  v.h.resize(std::size_t(c.num_layers));
  for (int l = 0; l < c.num_layers; ++l) {
    const std::string p = "transformer.h." + std::to_string(l) + ".";
    ParamView::Layer& w = v.h[std::size_t(l)];
    t.begin_group(l);
    w.ln1w = param(p + "ln_1.weight", {C});
    w.ln1b = param(p + "ln_1.bias", {C});
    w.qkvw = param(p + "attn.c_attn.weight", {3 * C, C});
    w.qkvb = param(p + "attn.c_attn.bias", {3 * C});
    w.attprojw = param(p + "attn.c_proj.weight", {C, C});
    w.attprojb = param(p + "attn.c_proj.bias", {C});
    w.ln2w = param(p + "ln_2.weight", {C});
    w.ln2b = param(p + "ln_2.bias", {C});
    w.fcw = param(p + "mlp.c_fc.weight", {4 * C, C});
    w.fcb = param(p + "mlp.c_fc.bias", {4 * C});
    w.fcprojw = param(p + "mlp.c_proj.weight", {C, 4 * C});
    w.fcprojb = param(p + "mlp.c_proj.bias", {C});
    t.end_group();
  }
  v.lnfw = param("transformer.ln_f.weight", {C});
  v.lnfb = param("transformer.ln_f.bias", {C});
  v.lm_head = c.tied_lm_head ? v.wte : param("lm_head.weight", {V, C});
  return v;
}

// The activations of one forward pass of a layer range at batch B and length T, in the order
// forward writes them (the activation gradients use the same layout). A range after the first
// block starts with its input, the previous block's output.
ActivationView gpt_activations(const GPTConfig& c, int B, int T, LayerRange r, TensorTable& t) {
  const std::int64_t b = B, n = T, C = c.channels, NH = c.num_heads, V = c.vocab_size;
  ActivationView a{};
  if (r.has_embedding()) a.encoded = t.add("encoded", {b, n, C});
  a.h.resize(std::size_t(c.num_layers));
  if (!r.has_embedding())
    a.h[std::size_t(r.first) - 1].residual3 = t.add("h." + std::to_string(r.first - 1) + ".residual_3", {b, n, C});
  for (int l = r.first; l < r.end; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    ActivationView::Layer& x = a.h[std::size_t(l)];
    t.begin_group(l);
    x.ln1 = t.add(p + "ln_1", {b, n, C});
    x.ln1_mean = t.add(p + "ln_1.mean", {b, n});
    x.ln1_rstd = t.add(p + "ln_1.rstd", {b, n});
    x.qkv = t.add(p + "attn.qkv", {b, n, 3 * C});
    x.atty = t.add(p + "attn.y", {b, n, C});
    x.att = t.add(p + "attn.probs", {b, NH, n, n});
    x.residual2 = t.add(p + "residual_2", {b, n, C});
    x.ln2 = t.add(p + "ln_2", {b, n, C});
    x.ln2_mean = t.add(p + "ln_2.mean", {b, n});
    x.ln2_rstd = t.add(p + "ln_2.rstd", {b, n});
    x.fch = t.add(p + "mlp.c_fc", {b, n, 4 * C});
    x.fch_gelu = t.add(p + "mlp.gelu", {b, n, 4 * C});
    x.residual3 = t.add(p + "residual_3", {b, n, C});
    t.end_group();
  }
  if (!r.has_head(c)) return a;
  a.lnf = t.add("ln_f", {b, n, C});
  a.lnf_mean = t.add("ln_f.mean", {b, n});
  a.lnf_rstd = t.add("ln_f.rstd", {b, n});
  a.logits = t.add("logits", {b, n, V});
  a.probs = t.add("probs", {b, n, V});
  a.losses = t.add("losses", {b, n});
  return a;
}

// The activation gradients of a range (gpt_backward_layers): one block's, which every block of the
// range shares (a block's are dead once its backward is done, and the residual stream's gradient
// is one buffer updated in place), and the head's. Views of the fields the backward does not use
// are null.
ActivationView gpt_gradients(const GPTConfig& c, int B, int T, LayerRange r, TensorTable& t) {
  const std::int64_t b = B, n = T, C = c.channels, V = c.vocab_size;
  ActivationView g{};
  g.h.resize(std::size_t(c.num_layers));
  ActivationView::Layer x{};
  x.ln1 = t.add("h.ln_1", {b, n, C});
  x.qkv = t.add("h.attn.qkv", {b, n, 3 * C});
  x.atty = t.add("h.attn.y", {b, n, C});
  x.ln2 = t.add("h.ln_2", {b, n, C});
  x.fch_gelu = t.add("h.mlp.gelu", {b, n, 4 * C});
  x.residual3 = t.add("h.residual_3", {b, n, C});
  for (int l = r.first; l < r.end; ++l) g.h[std::size_t(l)] = x;
  if (!r.has_head(c)) return g;
  g.lnf = t.add("ln_f", {b, n, C});
  g.logits = t.add("logits", {b, n, V});
  return g;
}

}  // namespace

std::vector<TensorInfo> gpt_parameter_table(const GPTConfig& c) {
  TensorTable t;
  gpt_parameters(c, t);
  return t.tensors();
}

std::size_t gpt_num_parameters(const GPTConfig& c) {
  TensorTable t;
  gpt_parameters(c, t);
  return t.total_numel();
}

LayerRange gpt_all_layers(const GPTConfig& c) { return {0, c.num_layers}; }

std::size_t gpt_activation_numel(const GPTConfig& c, int B, int T) {
  return gpt_activation_numel(c, B, T, gpt_all_layers(c));
}

namespace {

// A layout's size (a table without a buffer) and its views over a buffer, for the activations'
// and the gradients' descriptions alike.
using ActivationLayout = ActivationView (*)(const GPTConfig&, int, int, LayerRange, TensorTable&);

std::size_t layout_numel(ActivationLayout layout, const GPTConfig& c, int B, int T, LayerRange r) {
  TensorTable t;
  layout(c, B, T, r, t);
  return t.total_numel();
}

ActivationView layout_view(ActivationLayout layout, const GPTConfig& c, int B, int T, LayerRange r, float* buffer) {
  TensorTable t(buffer);
  return layout(c, B, T, r, t);
}

}  // namespace

std::size_t gpt_activation_numel(const GPTConfig& c, int B, int T, LayerRange r) {
  return layout_numel(gpt_activations, c, B, T, r);
}

ActivationView gpt_activation_view(const GPTConfig& c, int B, int T, LayerRange r, float* buffer) {
  return layout_view(gpt_activations, c, B, T, r, buffer);
}

std::size_t gpt_gradient_numel(const GPTConfig& c, int B, int T, LayerRange r) {
  return layout_numel(gpt_gradients, c, B, T, r);
}

ActivationView gpt_gradient_view(const GPTConfig& c, int B, int T, LayerRange r, float* buffer) {
  return layout_view(gpt_gradients, c, B, T, r, buffer);
}

namespace {

void ensure_activations(GPT& m, int B, int T) {
  if (m.B == B && m.T == T) return;
  const LayerRange all = gpt_all_layers(m.config);
  const std::size_t n = gpt_activation_numel(m.config, B, T, all), ng = gpt_gradient_numel(m.config, B, T, all);
  if (m.acts.size() < n) m.acts.assign(n, 0.0f);
  if (m.grad_acts.size() < ng) m.grad_acts.assign(ng, 0.0f);
  m.a = gpt_activation_view(m.config, B, T, all, m.acts.data());
  m.ga = gpt_gradient_view(m.config, B, T, all, m.grad_acts.data());
  m.B = B;
  m.T = T;
}

}  // namespace

GPT gpt_create(const GPTConfig& config, std::uint64_t seed) {
  gpt_validate(config);
  GPT m;
  m.config = config;
  TensorTable layout;
  gpt_parameters(config, layout);
  m.tensors = layout.tensors();
  m.num_parameters = layout.total_numel();
  for (int l = 0; l < config.num_layers; ++l) m.block_offset.push_back(layout.group_offset(l));
  m.params.assign(m.num_parameters, 0.0f);
  m.grads.assign(m.num_parameters, 0.0f);
  TensorTable params(m.params.data()), grads(m.grads.data());
  m.p = gpt_parameters(config, params);
  m.g = gpt_parameters(config, grads);
  gpt_init_parameters(m, seed);
  return m;
}

void gpt_init_parameters(GPT& m, std::uint64_t seed) {
  const double proj_std = 0.02 / std::sqrt(2.0 * m.config.num_layers);
  for (std::size_t i = 0; i < m.tensors.size(); ++i) {
    const TensorInfo& t = m.tensors[i];
    float* w = m.params.data() + t.offset;
    // One stream per tensor, so a tensor's values do not depend on the tensors before it.
    SplitMix64 rng{seed * 0x100000001B3ull + i};
    const bool is_bias = t.name.ends_with(".bias");
    const bool is_ln = t.name.find(".ln_") != std::string::npos;
    if (is_bias) {
      std::fill(w, w + t.numel, 0.0f);
    } else if (is_ln) {
      std::fill(w, w + t.numel, 1.0f);
    } else {
      const bool proj = t.name.ends_with("c_proj.weight");
      const double sd = proj ? proj_std : 0.02;
      for (std::size_t j = 0; j < t.numel; ++j) w[j] = float(sd * rng.normal());
    }
  }
}

double gpt_forward(GPT& m, const int* inputs, const int* targets, int B, int T,
                   const std::function<void(std::size_t)>& params_needed) {
  const GPTConfig& c = m.config;
  if (B < 1 || T < 1 || T > c.max_seq_len) fail("gpt_forward: batch {} x length {} outside 1..{}", B, T, c.max_seq_len);
  const std::size_t BT = std::size_t(B) * T;
  for (std::size_t i = 0; i < BT; ++i) {
    if (inputs[i] < 0 || inputs[i] >= c.vocab_size) fail("gpt_forward: token {} outside the vocabulary", inputs[i]);
    if (targets && (targets[i] < 0 || targets[i] >= c.vocab_size))
      fail("gpt_forward: target {} outside the vocabulary", targets[i]);
  }
  ensure_activations(m, B, T);
  m.inputs.assign(inputs, inputs + BT);
  m.have_targets = targets != nullptr;
  if (targets) m.targets.assign(targets, targets + BT);
  m.mean_loss = gpt_forward_layers(m, gpt_all_layers(c), m.a, m.inputs.data(), targets ? m.targets.data() : nullptr, B,
                                   T, params_needed);
  return m.mean_loss;
}

double gpt_forward_layers(const GPT& m, LayerRange r, const ActivationView& a, const int* inputs, const int* targets,
                          int B, int T, const std::function<void(std::size_t)>& params_needed) {
  const GPTConfig& c = m.config;
  const std::size_t BT = std::size_t(B) * T;
  const int C = c.channels, NH = c.num_heads, V = c.vocab_size;
  const ParamView& p = m.p;
  const float* params = m.params.data();
  // The parameters are in forward order: each layer needs those up to the next one's first.
  auto need_below = [&](const float* end) {
    if (params_needed) params_needed(std::size_t(end - params));
  };
  const float* residual = nullptr;
  if (r.has_embedding()) {
    need_below(params + m.block_offset[0]);
    k::encoder_forward(a.encoded, inputs, p.wte, p.wpe, B, T, C);
    residual = a.encoded;
  } else {
    residual = a.h[std::size_t(r.first) - 1].residual3;  // the previous stage's output
  }
  for (int l = r.first; l < r.end; ++l) {
    const auto& w = p.h[l];
    const auto& x = a.h[l];
    // Called again between the block's kernels with the same end: the all-gathers in flight move
    // on (as backward's progress calls move the reductions; once per block left them idle).
    const float* block_end = l + 1 < c.num_layers ? params + m.block_offset[std::size_t(l) + 1] : p.lnfw;
    need_below(block_end);
    // Three GEMMs leave their bias (and residual) to the kernel that reads their output next, in
    // the same pass over it: attention adds qkv's bias, ln2 attproj's bias and the residual, GELU
    // fc's bias (each writes the sum back: the backward reads it).
    k::layernorm_forward(x.ln1, x.ln1_mean, x.ln1_rstd, residual, w.ln1w, w.ln1b, B, T, C);
    k::matmul_forward(x.qkv, x.ln1, w.qkvw, nullptr, B, T, C, 3 * C);
    need_below(block_end);
    k::attention_forward(x.atty, x.att, x.qkv, w.qkvb, B, T, C, NH);
    need_below(block_end);
    k::matmul_forward(x.residual2, x.atty, w.attprojw, nullptr, B, T, C, C);
    k::layernorm_residual_forward(x.ln2, x.ln2_mean, x.ln2_rstd, x.residual2, w.attprojb, residual, w.ln2w, w.ln2b, B,
                                  T, C);
    k::matmul_forward(x.fch, x.ln2, w.fcw, nullptr, B, T, C, 4 * C);
    need_below(block_end);
    k::gelu_bias_forward(x.fch_gelu, x.fch, w.fcb, BT, 4 * C);  // fch: GELU's slope from here on
    k::matmul_residual_forward(x.residual3, x.fch_gelu, w.fcprojw, w.fcprojb, x.residual2, B, T, 4 * C, C);
    residual = x.residual3;
  }
  if (!r.has_head(c)) return -1;
  need_below(params + m.params.size());
  k::layernorm_forward(a.lnf, a.lnf_mean, a.lnf_rstd, residual, p.lnfw, p.lnfb, B, T, C);
  k::matmul_forward(a.logits, a.lnf, p.lm_head, nullptr, B, T, C, V);
  if (!targets) return -1;
  k::softmax_crossentropy_forward(a.losses, a.probs, a.logits, targets, B, T, V);
  double sum = 0;
  for (std::size_t i = 0; i < BT; ++i) sum += a.losses[i];
  return sum / double(BT);
}

void gpt_backward(GPT& m, const std::function<void(std::size_t)>& on_grads_ready) {
  if (m.B == 0 || !m.have_targets) fail("gpt_backward: needs a gpt_forward with targets first");
  gpt_backward_layers(m, gpt_all_layers(m.config), m.a, m.ga, m.inputs.data(), m.targets.data(), m.B, m.T,
                      on_grads_ready);
}

void gpt_backward_layers(GPT& m, LayerRange r, const ActivationView& a, const ActivationView& ga, const int* inputs,
                         const int* targets, int B, int T, const std::function<void(std::size_t)>& on_grads_ready) {
  const GPTConfig& c = m.config;
  const int C = c.channels, NH = c.num_heads, V = c.vocab_size;
  const std::size_t BT = std::size_t(B) * T;
  // The kernels accumulate unless told to write (the `false` arguments below): every activation
  // gradient's first kernel writes it, so only the one whose first kernel accumulates is zeroed
  // (zeroing all of them was one pass over ~70 MB per step for gpt-tiny, batch 8).
  const ParamView& p = m.p;
  const ParamView& g = m.g;
  std::size_t watermark = m.grads.size();  // gradients at offsets >= watermark are final
  auto ready_from = [&](const float* first_final) {
    watermark = std::size_t(first_final - m.grads.data());
    if (on_grads_ready) on_grads_ready(watermark);
  };
  // Between a block's kernels no new gradient is final, but the call lets the engine move the
  // buckets in flight on (progress mode: one call per block left the transfers idle for most of
  // the block's backward).
  auto progress = [&] {
    if (on_grads_ready && watermark < m.grads.size()) on_grads_ready(watermark);
  };

  const int L = c.num_layers;
  // The residual stream's gradient, updated in place from the last block to the first: a block's
  // output gradient is also its c_proj outputs' gradient (the residual adds copy it), and each
  // layer norm's backward adds its branch's share to it. Without the head it arrives from the
  // next stage, already in place.
  float* dres = ga.h[std::size_t(r.end) - 1].residual3;
  if (r.has_head(c)) {
    k::softmax_crossentropy_backward(ga.logits, a.probs, targets, 1.0f / float(BT), B, T, V, false);
    k::matmul_backward(ga.lnf, g.lm_head, nullptr, ga.logits, a.lnf, p.lm_head, B, T, C, V, false);
    if (!c.tied_lm_head) ready_from(g.lm_head);  // last in the buffer
    std::fill(dres, dres + BT * C, 0.0f);
    k::layernorm_backward(dres, g.lnfw, g.lnfb, ga.lnf, a.h[L - 1].residual3, p.lnfw, a.lnf_mean, a.lnf_rstd, B, T, C);
    ready_from(g.lnfw);  // wte (tied LM head) is at offset 0: only the encoder finishes it
  }
  for (int l = r.end - 1; l >= r.first; --l) {
    const auto& w = p.h[l];
    const auto& dw = g.h[l];
    const auto& x = a.h[l];
    // One block's gradient buffers for every block (gpt_gradient_view: a block's are dead once it
    // is done), which stay in cache from block to block.
    const auto& dx = ga.h[std::size_t(l)];
    const float* residual = l == 0 ? a.encoded : a.h[l - 1].residual3;
    k::matmul_backward(dx.fch_gelu, dw.fcprojw, dw.fcprojb, dres, x.fch_gelu, w.fcprojw, B, T, 4 * C, C, false);
    progress();
    // fc's and qkv's bias gradients are taken in GELU's and attention's backward passes (as their
    // biases were added in the forward's), not in a pass of their own over the GEMMs' dout.
    // GELU's backward runs in place over its output's gradient (each element read, then written
    // back: no second 4C-wide buffer to miss in cache), multiplying by the slope the forward left.
    k::gelu_bias_backward(dx.fch_gelu, dw.fcb, x.fch, dx.fch_gelu, BT, 4 * C);
    k::matmul_backward(dx.ln2, dw.fcw, nullptr, dx.fch_gelu, x.ln2, w.fcw, B, T, C, 4 * C, false);
    progress();
    k::layernorm_backward(dres, dw.ln2w, dw.ln2b, dx.ln2, x.residual2, w.ln2w, x.ln2_mean, x.ln2_rstd, B, T, C);
    k::matmul_backward(dx.atty, dw.attprojw, dw.attprojb, dres, x.atty, w.attprojw, B, T, C, C, false);
    progress();
    k::attention_backward(dx.qkv, dw.qkvb, dx.atty, x.qkv, x.att, B, T, C, NH, false);
    progress();
    k::matmul_backward(dx.ln1, dw.qkvw, nullptr, dx.qkv, x.ln1, w.qkvw, B, T, C, 3 * C, false);
    k::layernorm_backward(dres, dw.ln1w, dw.ln1b, dx.ln1, residual, w.ln1w, x.ln1_mean, x.ln1_rstd, B, T, C);
    ready_from(m.grads.data() + m.block_offset[std::size_t(l)]);  // the block's gradients are final
  }
  if (!r.has_embedding()) return;  // dres: the gradient of the range's input
  k::encoder_backward(g.wte, g.wpe, dres, inputs, B, T, C);
  ready_from(m.grads.data());
}

void gpt_zero_grad(GPT& m) { std::fill(m.grads.begin(), m.grads.end(), 0.0f); }

void gpt_move_gradients(GPT& m, float* home) {
  m.grads.move_to(home);
  TensorTable grads(m.grads.data());
  m.g = gpt_parameters(m.config, grads);
}

double gpt_grad_norm(const GPT& m) { return std::sqrt(k::sum_of_squares(m.grads.data(), m.grads.size())); }

double gpt_clip_grad_norm(GPT& m, double max_norm) {
  return train::clip_grad_norm(m.grads.data(), max_norm, 0.0, dp::ParameterShard::whole(m.num_parameters));
}

sp::coll::GradientLayout gpt_gradient_layout(const GPT& m) { return train::gradient_layout(m.config.name, m.tensors); }

}  // namespace sp::gpt
