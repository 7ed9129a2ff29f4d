#include "trainers/resnet/checkpoint.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/h5.hpp"

namespace sp::resnet {

namespace {

constexpr const char* kFormat = "scaleprobe-resnet-checkpoint";
constexpr std::int64_t kFormatVersion = 1;

void write_dataset(hid_t parent, const std::string& name, hid_t mem_type, hid_t file_type,
                   const std::vector<hsize_t>& dims, const void* data) {
  h5::Dataspace space(h5::check(dims.empty() ? H5Screate(H5S_SCALAR)
                                             : H5Screate_simple(int(dims.size()), dims.data(), nullptr),
                                "H5Screate"));
  h5::Dataset d(h5::check(H5Dcreate2(parent, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                          ("create dataset " + name).c_str()));
  h5::check_status(H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), ("write dataset " + name).c_str());
  d.close(("close dataset " + name).c_str());
}

// Reads a dataset of mem_type whose shape must be exactly dims.
void read_dataset(hid_t parent, const std::string& name, const std::vector<hsize_t>& dims, hid_t mem_type, void* out) {
  if (!h5::exists(parent, name)) fail("dataset '{}' is missing", name);
  h5::Dataset d(h5::check(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), ("open dataset " + name).c_str()));
  h5::Dataspace space(h5::check(H5Dget_space(d), "H5Dget_space"));
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> got(std::max(rank, 0));
  if (rank > 0) H5Sget_simple_extent_dims(space, got.data(), nullptr);
  if (got != dims) fail("dataset '{}' has shape ({}), expected ({})", name, fmt::join(got, ", "), fmt::join(dims, ", "));
  h5::check_status(H5Dread(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out), ("read dataset " + name).c_str());
}

std::vector<hsize_t> dims_of(const TensorInfo& t) { return std::vector<hsize_t>(t.shape.begin(), t.shape.end()); }

// "layer1.0.bn1.running_mean" -> "layer1.0.bn1"
std::string bn_name(const TensorInfo& running_mean) {
  const std::string& n = running_mean.name;
  return n.substr(0, n.size() - std::string(".running_mean").size());
}

}  // namespace

void save_checkpoint(const std::string& path, ResNet& m, const TrainState& st) {
  const std::string partial = path + ".partial";
  try {
    h5::quiet_errors();
    {
      h5::File f(H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
      if (f.get() < 0) fail("cannot create file");
      const ResNetConfig& c = m.config;
      h5::write_attribute(f, "format", std::string(kFormat));
      h5::write_attribute(f, "format_version", kFormatVersion);
      h5::write_attribute(f, "model_name", c.name);
      h5::write_attribute(f, "stages", std::int64_t(c.stages));
      h5::write_attribute(f, "depth", std::int64_t(c.depth));
      h5::write_attribute(f, "width", std::int64_t(c.width));
      h5::write_attribute(f, "num_classes", std::int64_t(c.num_classes));
      h5::write_attribute(f, "in_channels", std::int64_t(c.in_channels));
      h5::write_attribute(f, "decay_all", std::int64_t(c.decay_all ? 1 : 0));
      h5::write_attribute(f, "num_parameters", std::int64_t(m.num_parameters));
      h5::write_attribute(f, "weight_layout", std::string("nn.Conv2d [out, in, kh, kw]; nn.Linear [out, in]"));
      {
        h5::Group g = h5::create_group(f, "model");
        for (const TensorInfo& t : m.tensors)
          write_dataset(g, t.name, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, dims_of(t), m.params.data() + t.offset);
        const std::int64_t tracked = m.num_batches_tracked;
        for (const TensorInfo& t : m.buffer_tensors) {
          write_dataset(g, t.name, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, dims_of(t), m.buffers.data() + t.offset);
          if (t.name.ends_with(".running_mean"))
            write_dataset(g, bn_name(t) + ".num_batches_tracked", H5T_NATIVE_INT64, H5T_STD_I64LE, {}, &tracked);
        }
      }
      {
        h5::Group g = h5::create_group(f, "optimizer");
        for (const TensorInfo& t : m.tensors)
          write_dataset(g, t.name, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, dims_of(t), m.momentum.data() + t.offset);
        h5::write_attribute(g, "sgd_step", std::int64_t(m.sgd_step));
      }
      {
        h5::Group g = h5::create_group(f, "train");
        h5::write_attribute(g, "step", st.step);
        h5::write_attribute(g, "init_seed", std::int64_t(st.init_seed));
        h5::write_attribute(g, "data_seed", std::int64_t(st.data_seed));
        h5::write_attribute(g, "next_batch", st.next_batch);
        h5::write_attribute(g, "augment", std::int64_t(st.augment ? 1 : 0));
        h5::write_attribute(g, "data_source", st.data_source);
        h5::write_attribute(g, "data_fingerprint", st.data_fingerprint);
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
      f.close("close checkpoint");
    }
    std::filesystem::rename(partial, path);
  } catch (const std::exception& e) {
    std::error_code ec;
    std::filesystem::remove(partial, ec);
    fail("cannot write checkpoint '{}': {}", path, e.what());
  }
}

CheckpointInfo read_checkpoint_info(const std::string& path) {
  try {
    h5::quiet_errors();
    if (!std::filesystem::exists(path)) fail("no such file");
    if (H5Fis_hdf5(path.c_str()) <= 0) fail("not a readable HDF5 file (corrupt or truncated)");
    h5::File f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
    if (f.get() < 0) fail("not a readable HDF5 file (corrupt or truncated)");
    if (!h5::has_attribute(f, "format") || h5::read_string_attribute(f, "format") != kFormat)
      fail("not a scaleprobe ResNet checkpoint");
    const std::int64_t version = h5::read_int_attribute(f, "format_version");
    if (version != kFormatVersion) fail("checkpoint format version {} is not {}", version, kFormatVersion);
    CheckpointInfo info;
    ResNetConfig& c = info.config;
    c.name = h5::read_string_attribute(f, "model_name");
    c.stages = int(h5::read_int_attribute(f, "stages"));
    c.depth = int(h5::read_int_attribute(f, "depth"));
    c.width = int(h5::read_int_attribute(f, "width"));
    c.num_classes = int(h5::read_int_attribute(f, "num_classes"));
    c.in_channels = int(h5::read_int_attribute(f, "in_channels"));
    c.decay_all = h5::read_int_attribute(f, "decay_all") != 0;
    resnet_validate(c);
    h5::Group g = h5::open_group(f, "train");
    TrainState& s = info.state;
    s.step = h5::read_int_attribute(g, "step");
    s.init_seed = std::uint64_t(h5::read_int_attribute(g, "init_seed"));
    s.data_seed = std::uint64_t(h5::read_int_attribute(g, "data_seed"));
    s.next_batch = h5::read_int_attribute(g, "next_batch");
    s.augment = h5::read_int_attribute(g, "augment") != 0;
    s.data_source = h5::read_string_attribute(g, "data_source");
    s.data_fingerprint = h5::read_string_attribute(g, "data_fingerprint");
    if (s.step < 0 || s.next_batch < 0) fail("negative step or batch index");
    return info;
  } catch (const std::exception& e) {
    fail("cannot load checkpoint '{}': {}", path, e.what());
  }
}

void load_checkpoint(const std::string& path, ResNet& m, bool optimizer) {
  const CheckpointInfo info = read_checkpoint_info(path);
  const ResNetConfig& a = info.config;
  const ResNetConfig& b = m.config;
  if (a.stages != b.stages || a.depth != b.depth || a.width != b.width || a.num_classes != b.num_classes ||
      a.in_channels != b.in_channels)
    fail("cannot load checkpoint '{}': its model ({} stages, depth {}, width {}, {} classes) differs from this one "
         "({} stages, depth {}, width {}, {} classes)", path, a.stages, a.depth, a.width, a.num_classes, b.stages,
         b.depth, b.width, b.num_classes);
  try {
    h5::File f(h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "open checkpoint"));
    h5::Group g = h5::open_group(f, "model");
    for (const TensorInfo& t : m.tensors) read_dataset(g, t.name, dims_of(t), H5T_NATIVE_FLOAT, m.params.data() + t.offset);
    std::int64_t tracked = 0;
    for (const TensorInfo& t : m.buffer_tensors) {
      read_dataset(g, t.name, dims_of(t), H5T_NATIVE_FLOAT, m.buffers.data() + t.offset);
      if (t.name.ends_with(".running_mean"))
        read_dataset(g, bn_name(t) + ".num_batches_tracked", {}, H5T_NATIVE_INT64, &tracked);
    }
    m.num_batches_tracked = long(tracked);
    if (optimizer) {
      h5::Group o = h5::open_group(f, "optimizer");
      for (const TensorInfo& t : m.tensors)
        read_dataset(o, t.name, dims_of(t), H5T_NATIVE_FLOAT, m.momentum.data() + t.offset);
      m.sgd_step = long(h5::read_int_attribute(o, "sgd_step"));
    } else {
      std::fill(m.momentum.begin(), m.momentum.end(), 0.0f);
      m.sgd_step = 0;
    }
  } catch (const std::exception& e) {
    fail("cannot load checkpoint '{}': {}", path, e.what());
  }
}

}  // namespace sp::resnet
