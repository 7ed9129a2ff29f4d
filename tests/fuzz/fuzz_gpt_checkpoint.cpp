// Fuzz target: the GPT checkpoint loader (trainers/gpt/checkpoint.cpp over
// trainers/common/checkpoint_io): read_checkpoint_info, then load_checkpoint (with the optimizer
// state) into a model of the seeds' configuration.
//
// Input: a raw HDF5 file image (seeds: checkpoints written by gpt_train, see make_seeds.sh) or an
// h5_builder program over the checkpoint format's vocabulary, whose TENSORS operation writes
// every parameter of that model with its shape (or a perturbed one).
#include "core/run/error.hpp"
#include "fuzz_util.hpp"
#include "h5_builder.hpp"
#include "trainers/gpt/checkpoint.hpp"

namespace {

// The configuration of the seed checkpoints (make_seeds.sh: gpt_train --vocab 256 --context 4
// --width 8 --depth 1 --heads 2): small, so a checkpoint is a few KB.
sp::gpt::GPT& model() {
  static sp::gpt::GPT m = sp::gpt::gpt_create({"fuzz", 256, 4, 8, 1, 2}, 1);
  return m;
}

const sp::fuzz::H5Vocabulary& vocabulary() {
  static const sp::fuzz::H5Vocabulary v = [] {
    sp::fuzz::H5Vocabulary v{{"format",
                              "format_version",
                              "model_name",
                              "vocab_size",
                              "max_seq_len",
                              "channels",
                              "num_layers",
                              "num_heads",
                              "num_parameters",
                              "model",
                              "optimizer",
                              "train",
                              "check",
                              "exp_avg",
                              "exp_avg_sq",
                              "adam_step",
                              "step",
                              "init_seed",
                              "data_seed",
                              "next_batch",
                              "data_source",
                              "data_fingerprint",
                              "transformer.wte.weight"},
                             {"scaleprobe-gpt-checkpoint", "gpt-micro", "synthetic:4096", "", "x"},
                             {}};
    for (const auto& t : model().tensors) v.tensors.push_back({t.name, {t.shape.begin(), t.shape.end()}});
    v.tensors.push_back({"exp_avg", {model().num_parameters}});
    v.tensors.push_back({"exp_avg_sq", {model().num_parameters}});
    return v;
  }();
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return sp::fuzz::fuzz_hdf5_reader(data, size, vocabulary(), "the GPT checkpoint loader", [](const std::string& path) {
    sp::gpt::read_checkpoint_info(path);
    sp::gpt::load_checkpoint(path, model(), true);
  });
}
