#include "trainers/resnet/checkpoint.hpp"

#include <algorithm>
#include <vector>

#include "core/run/error.hpp"
#include "core/trace/h5.hpp"
#include "trainers/common/checkpoint_io.hpp"
#include "trainers/common/optimizer_shard.hpp"

namespace sp::resnet {

namespace {

// Version 2: checksummed (Fletcher32 datasets, HDF5 1.8 object headers); version 3: a whole-file
// digest too (core/trace/file_digest.hpp). Versions 1 and 2 still load.
constexpr train::CheckpointFormat kFormat{"scaleprobe-resnet-checkpoint", 3, 1, 3, "ResNet"};

// The configuration's root attributes, in the order they are written.
constexpr train::ConfigField<ResNetConfig> kConfigFields[] = {
    {"stages", &ResNetConfig::stages},
    {"depth", &ResNetConfig::depth},
    {"width", &ResNetConfig::width},
    {"num_classes", &ResNetConfig::num_classes},
    {"in_channels", &ResNetConfig::in_channels},
    {"decay_all", nullptr, &ResNetConfig::decay_all},
};

using train::dims_of;
using train::read_dataset;
using train::read_tensors;
using train::write_dataset;
using train::write_tensors;

// "layer1.0.bn1.running_mean" -> "layer1.0.bn1"
std::string bn_name(const TensorInfo& running_mean) {
  const std::string& n = running_mean.name;
  return n.substr(0, n.size() - std::string(".running_mean").size());
}

}  // namespace

void save_checkpoint(const std::string& path, ResNet& m, const TrainState& st) {
  train::write_checkpoint_file(path, kFormat, [&](hid_t f) {
    const ResNetConfig& c = m.config;
    train::write_model_attributes(f, c, kConfigFields, m.num_parameters,
                                  "nn.Conv2d [out, in, kh, kw]; nn.Linear [out, in]");
    {
      h5::Group g = h5::create_group(f, "model");
      write_tensors(g, m.tensors, m.params.data());
      const std::int64_t tracked = m.num_batches_tracked;
      for (const TensorInfo& t : m.buffer_tensors) {
        write_dataset(g, t.name, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, dims_of(t), m.buffers.data() + t.offset);
        if (t.name.ends_with(".running_mean"))
          write_dataset(g, bn_name(t) + ".num_batches_tracked", H5T_NATIVE_INT64, H5T_STD_I64LE, {}, &tracked);
      }
    }
    {
      h5::Group g = h5::create_group(f, "optimizer");
      std::vector<float> zeros;
      write_tensors(g, m.tensors, train::state_to_save(m.momentum, zeros, m.num_parameters, "SGD momentum"));
      h5::write_attribute(g, "sgd_step", std::int64_t(m.sgd_step));
    }
    {
      h5::Group g = h5::create_group(f, "train");
      train::write_train_state(g, st);
      h5::write_attribute(g, "augment", std::int64_t(st.augment ? 1 : 0));
    }
    {
      const int C = c.in_channels, S = 32, K = c.num_classes;
      std::vector<float> img(std::size_t(C) * S * S);
      for (std::size_t i = 0; i < img.size(); ++i) img[i] = float(int((7 * i + 3) % 17) - 8) / 8.0f;
      resnet_forward(m, img.data(), nullptr, 1, S, S, false);
      h5::Group g = h5::create_group(f, "check");
      write_dataset(g, "images", H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, {1, hsize_t(C), hsize_t(S), hsize_t(S)}, img.data());
      write_dataset(g, "logits", H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, {1, hsize_t(K)}, m.acts.data() + m.logits);
    }
  });
}

namespace {

CheckpointInfo info_of(hid_t f) {
  CheckpointInfo info;
  ResNetConfig& c = info.config;
  train::read_model_attributes(f, c, kConfigFields);
  resnet_validate(c);
  h5::Group g = h5::open_group(f, "train");
  train::read_train_state(g, info.state);
  info.state.augment = h5::read_int_attribute(g, "augment") != 0;
  return info;
}

}  // namespace

CheckpointInfo read_checkpoint_info(const std::string& path) {
  return train::read_checkpoint_info(path, kFormat, info_of);
}

void load_checkpoint(const std::string& path, ResNet& m, bool optimizer) {
  train::read_checkpoint_file(path, kFormat, info_of, m.config, kConfigFields, [&](hid_t f) {
    h5::Group g = h5::open_group(f, "model");
    read_tensors(g, m.tensors, m.params.data());
    std::int64_t tracked = 0;
    for (const TensorInfo& t : m.buffer_tensors) {
      read_dataset(g, t.name, dims_of(t), H5T_NATIVE_FLOAT, m.buffers.data() + t.offset);
      if (t.name.ends_with(".running_mean"))
        read_dataset(g, bn_name(t) + ".num_batches_tracked", {}, H5T_NATIVE_INT64, &tracked);
    }
    m.num_batches_tracked = long(tracked);
    if (optimizer) {
      h5::Group o = h5::open_group(f, "optimizer");
      m.momentum.assign(m.num_parameters, 0.0f);
      read_tensors(o, m.tensors, m.momentum.data());
      m.sgd_step = long(h5::read_int_attribute(o, "sgd_step"));
    } else {
      m.momentum.clear();  // a fresh optimizer: zeros at its first update
      m.sgd_step = 0;
    }
  });
}

}  // namespace sp::resnet
