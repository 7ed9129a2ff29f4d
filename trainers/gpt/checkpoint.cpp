#include "trainers/gpt/checkpoint.hpp"

#include <algorithm>
#include <vector>

#include "core/run/error.hpp"
#include "core/trace/h5.hpp"
#include "trainers/common/checkpoint_io.hpp"
#include "trainers/common/optimizer_shard.hpp"

namespace sp::gpt {

namespace {

// Version 2: checksummed (Fletcher32 datasets, HDF5 1.8 object headers); version 3: a whole-file
// digest too (core/trace/file_digest.hpp). Versions 1 and 2 still load.
constexpr train::CheckpointFormat kFormat{"scaleprobe-gpt-checkpoint", 3, 1, 3, "GPT"};

// The configuration's root attributes, in the order they are written. Checkpoints written before
// --untied-head have no tied_lm_head: those are tied.
constexpr train::ConfigField<GPTConfig> kConfigFields[] = {
    {"vocab_size", &GPTConfig::vocab_size}, {"max_seq_len", &GPTConfig::max_seq_len},
    {"channels", &GPTConfig::channels},     {"num_layers", &GPTConfig::num_layers},
    {"num_heads", &GPTConfig::num_heads},   {"tied_lm_head", nullptr, &GPTConfig::tied_lm_head, 1},
};

}  // namespace

void save_checkpoint(const std::string& path, GPT& m, const TrainState& st) {
  train::write_checkpoint_file(path, kFormat, [&](hid_t f) {
    const GPTConfig& c = m.config;
    train::write_model_attributes(f, c, kConfigFields, m.num_parameters, "nn.Linear [out, in]");
    train::write_tensors(h5::create_group(f, "model"), m.tensors, m.params.data());
    {
      h5::Group g = h5::create_group(f, "optimizer");
      const std::vector<hsize_t> dims{m.num_parameters};
      std::vector<float> zeros;
      train::write_dataset(g, "exp_avg", H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, dims,
                           train::state_to_save(m.m, zeros, m.num_parameters, "AdamW exp_avg"));
      train::write_dataset(g, "exp_avg_sq", H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, dims,
                           train::state_to_save(m.v, zeros, m.num_parameters, "AdamW exp_avg_sq"));
      h5::write_attribute(g, "adam_step", std::int64_t(m.adam_step));
    }
    train::write_train_state(h5::create_group(f, "train"), st);
    {
      const int T = std::min(16, c.max_seq_len), V = c.vocab_size;
      std::vector<int> tokens(T);
      for (int t = 0; t < T; ++t) tokens[t] = (7 * t + 3) % V;
      gpt_forward(m, tokens.data(), nullptr, 1, T);
      h5::Group g = h5::create_group(f, "check");
      train::write_dataset(g, "tokens", H5T_NATIVE_INT, H5T_STD_I32LE, {1, hsize_t(T)}, tokens.data());
      train::write_dataset(g, "logits", H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, {1, hsize_t(T), hsize_t(V)}, m.a.logits);
    }
  });
}

namespace {

CheckpointInfo info_of(hid_t f) {
  CheckpointInfo info;
  GPTConfig& c = info.config;
  train::read_model_attributes(f, c, kConfigFields);
  gpt_validate(c);
  train::read_train_state(h5::open_group(f, "train"), info.state);
  return info;
}

}  // namespace

CheckpointInfo read_checkpoint_info(const std::string& path) {
  return train::read_checkpoint_info(path, kFormat, info_of);
}

void load_checkpoint(const std::string& path, GPT& m, bool optimizer) {
  train::read_checkpoint_file(path, kFormat, info_of, m.config, kConfigFields, [&](hid_t f) {
    train::read_tensors(h5::open_group(f, "model"), m.tensors, m.params.data());
    if (optimizer) {
      h5::Group o = h5::open_group(f, "optimizer");
      m.m.assign(m.num_parameters, 0.0f);
      m.v.assign(m.num_parameters, 0.0f);
      train::read_dataset(o, "exp_avg", {m.num_parameters}, H5T_NATIVE_FLOAT, m.m.data());
      train::read_dataset(o, "exp_avg_sq", {m.num_parameters}, H5T_NATIVE_FLOAT, m.v.data());
      m.adam_step = long(h5::read_int_attribute(o, "adam_step"));
    } else {
      m.m.clear();  // a fresh optimizer: zeros at its first update
      m.v.clear();
      m.adam_step = 0;
    }
  });
}

}  // namespace sp::gpt
