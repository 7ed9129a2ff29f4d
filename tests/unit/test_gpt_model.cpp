// The GPT model of trainers/gpt: parameter table, configuration checks, a whole-model
// finite-difference gradient check, determinism, a short training run whose loss must fall, and
// the checkpoint round trip. Runs single-threaded (OMP_NUM_THREADS=1 from gpt.cmake).
//
// Gradient check. L = mean cross-entropy of gpt_forward, accumulated in double over float
// per-position losses. For every parameter tensor we compare gpt_backward's gradient with the
// central difference (L(w+h) - L(w-h)) / ((w+h) - (w-h)) (denominator from the stored floats)
// at EVERY element of every tensor (30,080 parameters, ~60k forward passes, ~6 s), h = 1e-2. Parameters are drawn
// larger than GPT-2's init (uniform +-0.25, LayerNorm gains 1 +- 0.25) so every gradient is well above float noise.
// Noise: the float forward pass rounds L to about 1e-7 relative, i.e. ~5e-7 absolute for L ~ 5,
// giving ~3e-5 in the difference quotient; truncation is h^2/6 |L'''|. We accept
//     |analytic - numeric| <= kAbsTol + kRelTol * |numeric|,  kAbsTol = 2e-4, kRelTol = 2e-2
// per element (the largest error is printed per tensor: observed 9e-5 in the embeddings, below
// 4e-5 elsewhere, at least 2x under the bound) and, per tensor, a relative L2 error below 1e-2
// (observed <= 7e-4). A wrong formula changes a gradient by O(its size): CatchesWrongGradient
// checks that scaling any one tensor's gradient by 1.05 fails the per-tensor criterion.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/run/error.hpp"
#include "trainers/gpt/checkpoint.hpp"
#include "trainers/gpt/data.hpp"
#include "trainers/gpt/model.hpp"

using namespace sp::gpt;

namespace {

constexpr float kStep = 1e-2f;
constexpr double kAbsTol = 2e-4, kRelTol = 2e-2, kTensorRelL2 = 1e-2;

GPTConfig micro() { return gpt_preset("gpt-micro"); }

void randomize(GPT& m, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-0.25f, 0.25f);
  for (const TensorInfo& t : m.tensors) {
    const bool ln_gain = t.name.find(".ln_") != std::string::npos && t.name.ends_with(".weight");
    for (std::size_t i = 0; i < t.numel; ++i) m.params[t.offset + i] = (ln_gain ? 1.0f : 0.0f) + u(rng);
  }
}

struct Batch {
  int B, T;
  std::vector<int> in, tg;
};
Batch random_batch(int B, int T, int V, unsigned seed) {
  std::mt19937 rng(seed);
  Batch b{B, T, std::vector<int>(B * T), std::vector<int>(B * T)};
  for (auto& x : b.in) x = int(rng() % V);
  for (auto& x : b.tg) x = int(rng() % V);
  return b;
}

struct TensorCheck {
  std::vector<double> analytic, numeric;
};

// Analytic and numeric gradients of each tensor: every element (per_tensor = 0) or a sample.
std::vector<TensorCheck> gradient_check(GPT& m, const Batch& b, std::size_t per_tensor) {
  gpt_forward(m, b.in.data(), b.tg.data(), b.B, b.T);
  gpt_zero_grad(m);
  gpt_backward(m);
  std::vector<TensorCheck> out;
  std::mt19937 rng(99);
  for (const TensorInfo& t : m.tensors) {
    TensorCheck c;
    const std::size_t n = per_tensor == 0 ? t.numel : per_tensor;
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t j = t.offset + (per_tensor == 0 ? k : rng() % t.numel);
      float& w = m.params[j];
      const float orig = w, wp = orig + kStep, wm = orig - kStep;
      w = wp;
      const double lp = gpt_forward(m, b.in.data(), b.tg.data(), b.B, b.T);
      w = wm;
      const double lm = gpt_forward(m, b.in.data(), b.tg.data(), b.B, b.T);
      w = orig;
      c.numeric.push_back((lp - lm) / (double(wp) - double(wm)));
      c.analytic.push_back(m.grads[j]);
    }
    out.push_back(std::move(c));
  }
  return out;
}

// Per-element and per-tensor criteria of the header comment; prints the largest error.
bool tensor_ok(const std::string& name, const TensorCheck& c, bool print) {
  double max_err = 0, diff2 = 0, ref2 = 0;
  bool elements_ok = true;
  for (std::size_t i = 0; i < c.numeric.size(); ++i) {
    const double e = std::fabs(c.analytic[i] - c.numeric[i]);
    max_err = std::max(max_err, e);
    diff2 += e * e;
    ref2 += c.numeric[i] * c.numeric[i];
    if (e > kAbsTol + kRelTol * std::fabs(c.numeric[i])) elements_ok = false;
  }
  const double rel = std::sqrt(diff2) / std::max(std::sqrt(ref2), 1e-12);
  if (print)
    std::printf("  %-36s max|err| %.2e  rel L2 %.2e  |grad| %.2e\n", name.c_str(), max_err, rel, std::sqrt(ref2));
  return elements_ok && rel < kTensorRelL2;
}

}  // namespace

TEST(GptModel, ParameterTableIsContiguousAndNamedLikePyTorch) {
  for (const std::string& preset : gpt_preset_names()) {
    const GPTConfig c = gpt_preset(preset);
    const auto t = gpt_parameter_table(c);
    ASSERT_EQ(t.size(), 2u + 12u * c.num_layers + 2u);
    std::size_t off = 0;
    for (const auto& x : t) {
      EXPECT_EQ(x.offset, off) << x.name;
      std::size_t n = 1;
      for (auto d : x.shape) n *= d;
      EXPECT_EQ(x.numel, n);
      off += x.numel;
    }
    EXPECT_EQ(off, gpt_num_parameters(c));
  }
  const auto t = gpt_parameter_table(gpt_preset("gpt-tiny"));
  EXPECT_EQ(gpt_num_parameters(gpt_preset("gpt-tiny")), 3257856u);
  EXPECT_EQ(t[0].name, "transformer.wte.weight");
  EXPECT_EQ(t[1].name, "transformer.wpe.weight");
  EXPECT_EQ(t[4].name, "transformer.h.0.attn.c_attn.weight");
  EXPECT_EQ(t[4].shape, (std::vector<std::int64_t>{768, 256}));  // nn.Linear [out, in]
  EXPECT_EQ(t[12].name, "transformer.h.0.mlp.c_proj.weight");
  EXPECT_EQ(t[12].shape, (std::vector<std::int64_t>{256, 1024}));
  EXPECT_EQ(t.back().name, "transformer.ln_f.bias");
  EXPECT_TRUE(t[4].weight_decay);
  EXPECT_FALSE(t[5].weight_decay);
  GPT m = gpt_create(micro(), 1);
  const auto layout = gpt_gradient_layout(m);
  EXPECT_EQ(layout.total_numel(), m.num_parameters);
  EXPECT_EQ(layout.tensors.front().name, "transformer.wte.weight");
}

TEST(GptModel, ConfigValidationMessages) {
  GPTConfig c = micro();
  c.num_heads = 5;
  try {
    gpt_validate(c);
    FAIL() << "accepted heads not dividing width";
  } catch (const sp::Error& e) {
    EXPECT_STREQ(e.what(), "heads (5) must divide the width (32)");
  }
  c = micro();
  c.num_layers = 0;
  EXPECT_THROW(gpt_validate(c), sp::Error);
  EXPECT_THROW(gpt_preset("gpt-huge"), sp::Error);
}

TEST(GptModel, WholeModelGradientCheck) {
  GPT m = gpt_create(micro(), 7);
  randomize(m, 11);
  const Batch b = random_batch(2, 5, m.config.vocab_size, 3);
  const auto checks = gradient_check(m, b, 0);
  for (std::size_t i = 0; i < checks.size(); ++i)
    EXPECT_TRUE(tensor_ok(m.tensors[i].name, checks[i], true)) << m.tensors[i].name;
}

TEST(GptModel, CatchesWrongGradient) {
  GPT m = gpt_create(micro(), 7);
  randomize(m, 11);
  const Batch b = random_batch(2, 5, m.config.vocab_size, 3);
  auto checks = gradient_check(m, b, 16);
  for (std::size_t i = 0; i < checks.size(); ++i) {
    for (double& a : checks[i].analytic) a *= 1.05;
    EXPECT_FALSE(tensor_ok(m.tensors[i].name, checks[i], false)) << m.tensors[i].name;
  }
}

TEST(GptModel, ForwardBackwardAreDeterministicAndShorterSequencesWork) {
  GPT m = gpt_create(micro(), 5);
  const Batch b = random_batch(3, 16, m.config.vocab_size, 4);
  const double l1 = gpt_forward(m, b.in.data(), b.tg.data(), b.B, b.T);
  gpt_zero_grad(m);
  gpt_backward(m);
  const std::vector<float> g1(m.grads.begin(), m.grads.end());
  const Batch s = random_batch(2, 3, m.config.vocab_size, 5);  // a different shape in between
  gpt_forward(m, s.in.data(), s.tg.data(), s.B, s.T);
  const double l2 = gpt_forward(m, b.in.data(), b.tg.data(), b.B, b.T);
  gpt_zero_grad(m);
  gpt_backward(m);
  EXPECT_EQ(l1, l2);
  EXPECT_EQ(g1, std::vector<float>(m.grads.begin(), m.grads.end()));
  EXPECT_NEAR(l1, std::log(double(m.config.vocab_size)), 0.1);               // GPT-2 init: near-uniform output
  EXPECT_THROW(gpt_forward(m, b.in.data(), b.tg.data(), 1, 17), sp::Error);  // T > context
}

// The data-parallel engine moves the gradients into its node segment (shm-seg): backward must
// then write them there, bit for bit as before, and a copy of the model owns its own.
TEST(GptModel, GradientsMovedElsewhereAreWhereBackwardWrites) {
  GPT m = gpt_create(micro(), 5);
  const Batch b = random_batch(2, 8, m.config.vocab_size, 4);
  gpt_forward(m, b.in.data(), b.tg.data(), b.B, b.T);
  gpt_zero_grad(m);
  gpt_backward(m);
  const std::vector<float> before(m.grads.begin(), m.grads.end());
  std::vector<float> home(m.num_parameters, std::nanf(""));
  gpt_move_gradients(m, home.data());
  ASSERT_EQ(m.grads.data(), home.data());
  EXPECT_FALSE(m.grads.owns_memory());
  EXPECT_EQ(home, before);
  gpt_zero_grad(m);
  gpt_forward(m, b.in.data(), b.tg.data(), b.B, b.T);
  gpt_backward(m);
  EXPECT_EQ(home, before);
  const GPT copy = m;
  EXPECT_TRUE(copy.grads.owns_memory());
  EXPECT_NE(copy.grads.data(), home.data());
  EXPECT_EQ(std::vector<float>(copy.grads.begin(), copy.grads.end()), before);
}

// Fixed seed, synthetic corpus, gpt-micro: 150 AdamW steps of 8 x 16 tokens must bring the
// training loss (mean of the last 10 steps) from ~ln 128 = 4.85 to below 2.6, and the validation
// loss below 2.8. Observed: 2.38 and 2.50. The corpus' unigram (character-frequency) entropy is
// 3.07 nats, so both bounds need context, not just character statistics.
TEST(GptModel, LossFallsOnSyntheticCorpus) {
  const GPTConfig c = micro();
  const auto corpus = synthetic_corpus(200000, 42);
  const TokenSplit split = split_tokens(corpus, 0.1, 42, c.vocab_size, 17);
  const int B = 8, T = 16, steps = 150;
  DataLoader train(split.train, B, T, 0, 1, 42), val(split.val, B, T, 0, 1, 43);
  GPT m = gpt_create(c, 1337);
  std::vector<int> in(B * T), tg(B * T);
  AdamWParams opt;
  opt.lr = 1e-2f;
  double first = 0, last10 = 0;
  for (int s = 0; s < steps; ++s) {
    train.next(in.data(), tg.data());
    const double loss = gpt_forward(m, in.data(), tg.data(), B, T);
    if (s == 0) first = loss;
    if (s >= steps - 10) last10 += loss / 10;
    gpt_zero_grad(m);
    gpt_backward(m);
    gpt_clip_grad_norm(m, 1.0);
    gpt_update(m, opt);
  }
  double vl = 0;
  for (int i = 0; i < 8; ++i) {
    val.batch(i, in.data(), tg.data());
    vl += gpt_forward(m, in.data(), tg.data(), B, T) / 8;
  }
  std::printf("  first loss %.4f, mean of last 10 %.4f, val %.4f\n", first, last10, vl);
  EXPECT_NEAR(first, std::log(128.0), 0.1);
  EXPECT_LT(last10, 2.6);
  EXPECT_LT(vl, 2.8);
}

TEST(GptData, SplitAndLoaderAreReproducibleAndSharded) {
  const auto a = synthetic_corpus(50000, 7), b = synthetic_corpus(50000, 7), c = synthetic_corpus(50000, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(fingerprint(a), fingerprint(b));
  const TokenSplit s = split_tokens(a, 0.1, 1, 128, 33);
  EXPECT_EQ(s.train.size() + s.val.size(), a.size());
  EXPECT_GT(s.val.size(), 0u);
  // Two ranks of B = 2 see exactly the rows one rank of B = 4 sees.
  DataLoader one(s.train, 4, 32, 0, 1, 5), r0(s.train, 2, 32, 0, 2, 5), r1(s.train, 2, 32, 1, 2, 5);
  std::vector<int> in(4 * 32), tg(4 * 32), in0(64), tg0(64), in1(64), tg1(64);
  one.batch(3, in.data(), tg.data());
  r0.batch(3, in0.data(), tg0.data());
  r1.batch(3, in1.data(), tg1.data());
  EXPECT_TRUE(std::equal(in0.begin(), in0.end(), in.begin()));
  EXPECT_TRUE(std::equal(in1.begin(), in1.end(), in.begin() + 64));
  for (int i = 0; i < 31; ++i) EXPECT_EQ(tg[i], in[i + 1]);  // targets are inputs shifted by one
  EXPECT_THROW(split_tokens(std::vector<std::uint8_t>{200, 1, 2}, 0.1, 1, 128, 2), sp::Error);
}

TEST(GptCheckpoint, RoundTripIsBitwiseAndCorruptFilesAreRejected) {
  const auto dir = std::filesystem::temp_directory_path() / ("gpt_ckpt_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "ck.h5").string();
  GPT m = gpt_create(micro(), 3);
  randomize(m, 4);
  m.m.resize(m.num_parameters);
  m.v.resize(m.num_parameters);
  for (std::size_t i = 0; i < m.num_parameters; ++i) {
    m.m[i] = float(i) * 1e-3f;
    m.v[i] = float(i) * 1e-6f;
  }
  m.adam_step = 17;
  TrainState st;
  st.step = 17;
  st.init_seed = 3;
  st.data_seed = 0xFFFFFFFFull;
  st.next_batch = 21;
  st.data_source = "synthetic:1000";
  st.data_fingerprint = "0123456789abcdef";
  save_checkpoint(path, m, st);
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
  const CheckpointInfo info = read_checkpoint_info(path);
  EXPECT_EQ(info.config.channels, 32);
  EXPECT_EQ(info.state.step, 17);
  EXPECT_EQ(info.state.data_seed, 0xFFFFFFFFull);
  EXPECT_EQ(info.state.next_batch, 21);
  EXPECT_EQ(info.state.data_fingerprint, "0123456789abcdef");
  GPT r = gpt_create(micro(), 99);
  load_checkpoint(path, r, true);
  EXPECT_EQ(r.params, m.params);
  EXPECT_EQ(r.m, m.m);
  EXPECT_EQ(r.v, m.v);
  EXPECT_EQ(r.adam_step, 17);
  GPT w = gpt_create(micro(), 99);
  load_checkpoint(path, w, false);
  EXPECT_EQ(w.params, m.params);
  EXPECT_EQ(w.adam_step, 0);
  // Wrong model size, truncated file, garbage, missing file: one-line sp::Error each.
  GPTConfig other = micro();
  other.channels = 64;
  GPT o = gpt_create(other, 1);
  try {
    load_checkpoint(path, o, true);
    ADD_FAILURE() << "a checkpoint of another model loaded";
  } catch (const sp::Error& e) {
    // Both configurations, named field by field.
    const std::string message = e.what();
    EXPECT_NE(message.find(fmt::format("(vocab_size {}", micro().vocab_size)), std::string::npos) << message;
    EXPECT_NE(message.find(fmt::format("channels {}, num_layers", micro().channels)), std::string::npos) << message;
    EXPECT_NE(message.find("differs from this one (vocab_size"), std::string::npos) << message;
    EXPECT_NE(message.find("channels 64, num_layers"), std::string::npos) << message;
  }
  const auto size = std::filesystem::file_size(path);
  std::filesystem::copy_file(path, dir / "trunc.h5");
  std::filesystem::resize_file(dir / "trunc.h5", size / 2);
  for (const std::string& bad : {(dir / "trunc.h5").string(), (dir / "missing.h5").string()}) {
    try {
      GPT x = gpt_create(micro(), 1);
      load_checkpoint(bad, x, true);
      ADD_FAILURE() << "loaded " << bad;
    } catch (const sp::Error& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
      EXPECT_NE(std::string(e.what()).find("cannot load checkpoint"), std::string::npos) << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}

// The activation buffer is what the model's one activation description adds up to: its tensors
// tile [0, total) in forward order. The literal is the count by hand for gpt-micro at B 2, T 5
// (per block 16 BTC + 4 BT + B NH T^2 = 5360; embeddings, ln_f, logits, probs, losses 3230).
TEST(GptModel, ActivationBufferIsItsTensorsTiled) {
  const GPTConfig c = micro();
  EXPECT_EQ(gpt_activation_numel(c, 2, 5), 13950u);
  // Through the model: a forward at B 2, T 5 sizes the buffers to exactly the table.
  GPT m = gpt_create(c, 1);
  const Batch b = random_batch(2, 5, c.vocab_size, 3);
  gpt_forward(m, b.in.data(), b.tg.data(), b.B, b.T);
  EXPECT_EQ(m.acts.size(), gpt_activation_numel(c, 2, 5));
  EXPECT_EQ(m.a.encoded, m.acts.data());
  EXPECT_EQ(m.a.losses + 10, m.acts.data() + m.acts.size());  // the last tensor ends the buffer
}

// The activation-gradient buffer is one block's (every block of the range views it) and the
// head's, whatever the depth: gpt-micro at B 2, T 5 (C 32, V 128) by hand, per block
// (1 + 3 + 1 + 1 + 4 + 1) BTC = 3520, ln_f and logits BT (C + V) = 1600. The model's gradient views
// all point into it, every block at the same buffers.
TEST(GptModel, GradientBufferIsOneBlockWhateverTheDepth) {
  GPTConfig c = micro();
  const LayerRange all = gpt_all_layers(c);
  EXPECT_EQ(gpt_gradient_numel(c, 2, 5, all), 5120u);
  c.num_layers = 6;
  EXPECT_EQ(gpt_gradient_numel(c, 2, 5, gpt_all_layers(c)), 5120u);
  EXPECT_LT(gpt_gradient_numel(c, 2, 5, gpt_all_layers(c)), gpt_activation_numel(c, 2, 5));
  GPT m = gpt_create(c, 1);
  const Batch b = random_batch(2, 5, c.vocab_size, 3);
  gpt_forward(m, b.in.data(), b.tg.data(), b.B, b.T);
  EXPECT_EQ(m.grad_acts.size(), 5120u);
  for (const auto& layer : m.ga.h) {
    EXPECT_EQ(layer.fch_gelu, m.ga.h[0].fch_gelu);
    EXPECT_EQ(layer.residual3, m.ga.h[0].residual3);
  }
  EXPECT_EQ(m.ga.logits + 2 * 5 * 128, m.grad_acts.data() + m.grad_acts.size());
}

// --untied-head: one table entry (lm_head.weight, last, decayed), the forward/backward calls use
// it; the whole model passes the gradient check, and backward reports lm_head ready first.
TEST(GptModel, UntiedHeadIsOneMoreTensorAndGradientChecks) {
  GPTConfig c = micro();
  c.tied_lm_head = false;
  const auto t = gpt_parameter_table(c);
  ASSERT_EQ(t.back().name, "lm_head.weight");
  EXPECT_EQ(t.back().shape, (std::vector<std::int64_t>{c.vocab_size, c.channels}));
  EXPECT_TRUE(t.back().weight_decay);
  EXPECT_EQ(gpt_num_parameters(c), gpt_num_parameters(micro()) + std::size_t(c.vocab_size) * c.channels);

  GPT m = gpt_create(c, 7);
  randomize(m, 11);
  EXPECT_NE(m.p.lm_head, m.p.wte);
  const Batch b = random_batch(2, 5, c.vocab_size, 3);
  const auto checks = gradient_check(m, b, 0);
  for (std::size_t i = 0; i < checks.size(); ++i)
    EXPECT_TRUE(tensor_ok(m.tensors[i].name, checks[i], false)) << m.tensors[i].name;

  std::vector<std::size_t> ready;
  gpt_forward(m, b.in.data(), b.tg.data(), b.B, b.T);
  gpt_zero_grad(m);
  gpt_backward(m, [&](std::size_t offset) { ready.push_back(offset); });
  ASSERT_FALSE(ready.empty());
  EXPECT_EQ(ready.front(), t.back().offset);
  EXPECT_TRUE(std::is_sorted(ready.rbegin(), ready.rend()));  // non-increasing
  EXPECT_EQ(ready.back(), 0u);
  for (int l = 0; l < c.num_layers; ++l)  // each block's first tensor, from its table group
    EXPECT_NE(std::find(ready.begin(), ready.end(), m.block_offset[std::size_t(l)]), ready.end()) << l;
}
