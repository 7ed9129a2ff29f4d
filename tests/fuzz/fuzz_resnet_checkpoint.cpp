// Fuzz target: the ResNet checkpoint loader (trainers/resnet/checkpoint.cpp over
// trainers/common/checkpoint_io): read_checkpoint_info, then load_checkpoint (with the momentum
// buffers) into a model of the seeds' configuration.
//
// Input: a raw HDF5 file image (seeds: checkpoints written by resnet_train, see make_seeds.sh) or
// an h5_builder program over the checkpoint format's vocabulary, whose TENSORS operation writes
// every parameter, batch-norm buffer and num_batches_tracked with its shape (or a perturbed one).
#include "core/run/error.hpp"
#include "fuzz_util.hpp"
#include "h5_builder.hpp"
#include "trainers/resnet/checkpoint.hpp"

namespace {

// The configuration of the seed checkpoints (make_seeds.sh: resnet_train --depth 8 --width 2).
sp::resnet::ResNet& model() {
  static sp::resnet::ResNet m = [] {
    sp::resnet::ResNetConfig c = sp::resnet::resnet_preset("resnet20");
    c.depth = 8;
    c.width = 2;
    return sp::resnet::resnet_create(c, 1);
  }();
  return m;
}

const sp::fuzz::H5Vocabulary& vocabulary() {
  static const sp::fuzz::H5Vocabulary v = [] {
    sp::fuzz::H5Vocabulary v{{"format",       "format_version",
                              "model_name",   "stages",
                              "depth",        "width",
                              "num_classes",  "in_channels",
                              "decay_all",    "num_parameters",
                              "model",        "optimizer",
                              "train",        "check",
                              "sgd_step",     "step",
                              "init_seed",    "data_seed",
                              "next_batch",   "augment",
                              "data_source",  "data_fingerprint",
                              "conv1.weight", "bn1.num_batches_tracked"},
                             {"scaleprobe-resnet-checkpoint", "resnet20", "synthetic:64+16", "", "x"},
                             {}};
    for (const auto& t : model().tensors) v.tensors.push_back({t.name, {t.shape.begin(), t.shape.end()}});
    for (const auto& t : model().buffer_tensors) {
      v.tensors.push_back({t.name, {t.shape.begin(), t.shape.end()}});
      if (t.name.ends_with(".running_mean"))
        v.tensors.push_back({t.name.substr(0, t.name.size() - 13) + ".num_batches_tracked", {}});
    }
    return v;
  }();
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return sp::fuzz::fuzz_hdf5_reader(data, size, vocabulary(), "the ResNet checkpoint loader",
                                    [](const std::string& path) {
                                      sp::resnet::read_checkpoint_info(path);
                                      sp::resnet::load_checkpoint(path, model(), true);
                                    });
}
