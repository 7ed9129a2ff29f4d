#include "trainers/gpt/checkpoint.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/h5.hpp"

namespace sp::gpt {

namespace {

constexpr const char* kFormat = "scaleprobe-gpt-checkpoint";
constexpr std::int64_t kFormatVersion = 1;

void write_dataset(hid_t parent, const std::string& name, hid_t mem_type, hid_t file_type,
                   const std::vector<hsize_t>& dims, const void* data) {
  h5::Dataspace space(h5::check(H5Screate_simple(int(dims.size()), dims.data(), nullptr), "H5Screate_simple"));
  h5::Dataset d(h5::check(H5Dcreate2(parent, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                          ("create dataset " + name).c_str()));
  h5::check_status(H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), ("write dataset " + name).c_str());
  d.close(("close dataset " + name).c_str());
}

// Reads a float dataset whose shape must be exactly dims.
void read_floats(hid_t parent, const std::string& name, const std::vector<hsize_t>& dims, float* out) {
  if (!h5::exists(parent, name)) fail("dataset '{}' is missing", name);
  h5::Dataset d(h5::check(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), ("open dataset " + name).c_str()));
  h5::Dataspace space(h5::check(H5Dget_space(d), "H5Dget_space"));
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> got(std::max(rank, 0));
  if (rank >= 0) H5Sget_simple_extent_dims(space, got.data(), nullptr);
  if (got != dims) {
    fail("dataset '{}' has shape ({}), expected ({})", name, fmt::join(got, ", "), fmt::join(dims, ", "));
  }
  h5::check_status(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out), ("read dataset " + name).c_str());
}

std::uint64_t read_u64(hid_t obj, const std::string& name) {
  return static_cast<std::uint64_t>(h5::read_int_attribute(obj, name));
}

}  // namespace

void save_checkpoint(const std::string& path, GPT& m, const TrainState& st) {
  const std::string partial = path + ".partial";
  try {
    h5::quiet_errors();
    {
      h5::File f(H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
      if (f.get() < 0) fail("cannot create file");
      const GPTConfig& c = m.config;
      h5::write_attribute(f, "format", std::string(kFormat));
      h5::write_attribute(f, "format_version", kFormatVersion);
      h5::write_attribute(f, "model_name", c.name);
      h5::write_attribute(f, "vocab_size", std::int64_t(c.vocab_size));
      h5::write_attribute(f, "max_seq_len", std::int64_t(c.max_seq_len));
      h5::write_attribute(f, "channels", std::int64_t(c.channels));
      h5::write_attribute(f, "num_layers", std::int64_t(c.num_layers));
      h5::write_attribute(f, "num_heads", std::int64_t(c.num_heads));
      h5::write_attribute(f, "num_parameters", std::int64_t(m.num_parameters));
      h5::write_attribute(f, "weight_layout", std::string("nn.Linear [out, in]"));
      {
        h5::Group g = h5::create_group(f, "model");
        for (const TensorInfo& t : m.tensors) {
          std::vector<hsize_t> dims(t.shape.begin(), t.shape.end());
          write_dataset(g, t.name, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, dims, m.params.data() + t.offset);
        }
      }
      {
        h5::Group g = h5::create_group(f, "optimizer");
        const std::vector<hsize_t> dims{m.num_parameters};
        write_dataset(g, "exp_avg", H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, dims, m.m.data());
        write_dataset(g, "exp_avg_sq", H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, dims, m.v.data());
        h5::write_attribute(g, "adam_step", std::int64_t(m.adam_step));
      }
      {
        h5::Group g = h5::create_group(f, "train");
        h5::write_attribute(g, "step", st.step);
        h5::write_attribute(g, "init_seed", std::int64_t(st.init_seed));
        h5::write_attribute(g, "data_seed", std::int64_t(st.data_seed));
        h5::write_attribute(g, "next_batch", st.next_batch);
        h5::write_attribute(g, "data_source", st.data_source);
        h5::write_attribute(g, "data_fingerprint", st.data_fingerprint);
      }
      {
        const int T = std::min(16, c.max_seq_len), V = c.vocab_size;
        std::vector<int> tokens(T);
        for (int t = 0; t < T; ++t) tokens[t] = (7 * t + 3) % V;
        gpt_forward(m, tokens.data(), nullptr, 1, T);
        h5::Group g = h5::create_group(f, "check");
        write_dataset(g, "tokens", H5T_NATIVE_INT, H5T_STD_I32LE, {1, hsize_t(T)}, tokens.data());
        write_dataset(g, "logits", H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, {1, hsize_t(T), hsize_t(V)}, m.a.logits);
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
      fail("not a scaleprobe GPT checkpoint");
    const std::int64_t version = h5::read_int_attribute(f, "format_version");
    if (version != kFormatVersion) fail("checkpoint format version {} is not {}", version, kFormatVersion);
    CheckpointInfo info;
    GPTConfig& c = info.config;
    c.name = h5::read_string_attribute(f, "model_name");
    c.vocab_size = int(h5::read_int_attribute(f, "vocab_size"));
    c.max_seq_len = int(h5::read_int_attribute(f, "max_seq_len"));
    c.channels = int(h5::read_int_attribute(f, "channels"));
    c.num_layers = int(h5::read_int_attribute(f, "num_layers"));
    c.num_heads = int(h5::read_int_attribute(f, "num_heads"));
    gpt_validate(c);
    h5::Group g = h5::open_group(f, "train");
    TrainState& s = info.state;
    s.step = h5::read_int_attribute(g, "step");
    s.init_seed = read_u64(g, "init_seed");
    s.data_seed = read_u64(g, "data_seed");
    s.next_batch = h5::read_int_attribute(g, "next_batch");
    s.data_source = h5::read_string_attribute(g, "data_source");
    s.data_fingerprint = h5::read_string_attribute(g, "data_fingerprint");
    if (s.step < 0 || s.next_batch < 0) fail("negative step or batch index");
    return info;
  } catch (const std::exception& e) {
    fail("cannot load checkpoint '{}': {}", path, e.what());
  }
}

void load_checkpoint(const std::string& path, GPT& m, bool optimizer) {
  const CheckpointInfo info = read_checkpoint_info(path);
  const GPTConfig& a = info.config;
  const GPTConfig& b = m.config;
  if (a.vocab_size != b.vocab_size || a.max_seq_len != b.max_seq_len || a.channels != b.channels ||
      a.num_layers != b.num_layers || a.num_heads != b.num_heads)
    fail("cannot load checkpoint '{}': its model (V {} T {} C {} L {} NH {}) differs from this one "
         "(V {} T {} C {} L {} NH {})", path, a.vocab_size, a.max_seq_len, a.channels, a.num_layers, a.num_heads,
         b.vocab_size, b.max_seq_len, b.channels, b.num_layers, b.num_heads);
  try {
    h5::File f(h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "open checkpoint"));
    h5::Group g = h5::open_group(f, "model");
    for (const TensorInfo& t : m.tensors)
      read_floats(g, t.name, std::vector<hsize_t>(t.shape.begin(), t.shape.end()), m.params.data() + t.offset);
    if (optimizer) {
      h5::Group o = h5::open_group(f, "optimizer");
      read_floats(o, "exp_avg", {m.num_parameters}, m.m.data());
      read_floats(o, "exp_avg_sq", {m.num_parameters}, m.v.data());
      m.adam_step = long(h5::read_int_attribute(o, "adam_step"));
    } else {
      std::fill(m.m.begin(), m.m.end(), 0.0f);
      std::fill(m.v.begin(), m.v.end(), 0.0f);
      m.adam_step = 0;
    }
  } catch (const std::exception& e) {
    fail("cannot load checkpoint '{}': {}", path, e.what());
  }
}

}  // namespace sp::gpt
