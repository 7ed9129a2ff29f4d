// The HDF5 plumbing every trainer's checkpoint format shares: the file is written by one process
// under "<path>.partial" and renamed when complete (a killed run never leaves a half-written
// checkpoint under the real name), its root carries the attributes format and format_version,
// and every dataset's shape is checked on reading. What goes into the file is the trainer's
// (trainers/gpt/checkpoint.hpp, trainers/resnet/checkpoint.hpp).
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "core/run/error.hpp"
#include "core/trace/h5.hpp"
#include "trainers/common/tensor_table.hpp"

namespace sp::train {

// Identifies a checkpoint format: the root attributes format and format_version, and the name
// used in "not a scaleprobe <name> checkpoint".
struct CheckpointFormat {
  const char* format;
  std::int64_t version;               // what is written
  std::int64_t oldest_version;        // the oldest still read
  std::int64_t first_digest_version;  // from which on the file must carry a whole-file digest
  const char* name;
};

// Creates "<path>.partial", writes format and format_version, lets write(file) fill it, stamps
// the whole-file digest into its user block (core/trace/file_digest.hpp) and renames it to path. Array
// datasets also carry a Fletcher32 checksum per chunk, the rest (attributes, scalars) the
// checksums of HDF5 1.8 object headers. Throws sp::Error "cannot write checkpoint '<path>': <problem>" (and removes
// the partial file).
void write_checkpoint_file(const std::string& path, const CheckpointFormat& format,
                           const std::function<void(hid_t file)>& write);
// Verifies the whole-file digest (before libhdf5 reads a byte; a file without one is of an older
// format version and read whole in an isolated child first, core/trace/h5_open.hpp), opens the
// checkpoint from the verified bytes and checks its format and version. Throws
// sp::Error naming the problem (no such file, corrupt, not HDF5, another format or version);
// callers add the path.
h5::File open_checkpoint_file(const std::string& path, const CheckpointFormat& format);

// Runs read() and returns what it returns; an error becomes sp::Error
// "cannot load checkpoint '<path>': <problem>".
template <typename Read>
auto load_or_fail(const std::string& path, const Read& read) -> decltype(read()) {
  try {
    return read();
  } catch (const std::exception& e) {
    fail("cannot load checkpoint '{}': {}", path, one_line_message(e));
  }
}
// Reads the /check group of a checkpoint opened by open_checkpoint_file (reference outputs for
// other loaders, which the C++ loaders do not otherwise read) so that HDF5 verifies those
// checksums too. The tensors are then read from the same open (the verified bytes).
void verify_checkpoint_data(hid_t file);

// What info_of(file) reads from path's checkpoint (its configuration and train state); errors
// name the path.
template <typename InfoOf>
auto read_checkpoint_info(const std::string& path, const CheckpointFormat& format, const InfoOf& info_of) {
  return load_or_fail(path, [&] { return info_of(open_checkpoint_file(path, format)); });
}

// A field of a model configuration, stored as the root attribute `name`: an integer, or a yes/no
// flag stored as 0/1. absent: the value read from files written before the field existed (-1: the
// attribute is required).
template <typename Config>
struct ConfigField {
  const char* name;
  int Config::*number = nullptr;
  bool Config::*flag = nullptr;
  int absent = -1;

  std::int64_t value(const Config& c) const { return number ? c.*number : (c.*flag ? 1 : 0); }
  void set(Config& c, std::int64_t v) const {
    if (number)
      c.*number = int(v);
    else
      c.*flag = v != 0;
  }
};

// The model's root attributes: model_name, the configuration's fields in table order,
// num_parameters and weight_layout (how weights are laid out, for other loaders).
template <typename Config, std::size_t N>
void write_model_attributes(hid_t file, const Config& c, const ConfigField<Config> (&fields)[N],
                            std::size_t num_parameters, const std::string& weight_layout) {
  h5::write_attribute(file, "model_name", c.name);
  for (const ConfigField<Config>& f : fields) h5::write_attribute(file, f.name, f.value(c));
  h5::write_attribute(file, "num_parameters", std::int64_t(num_parameters));
  h5::write_attribute(file, "weight_layout", weight_layout);
}
// model_name and the configuration's fields (the caller validates the result).
template <typename Config, std::size_t N>
void read_model_attributes(hid_t file, Config& c, const ConfigField<Config> (&fields)[N]) {
  c.name = h5::read_string_attribute(file, "model_name");
  for (const ConfigField<Config>& f : fields)
    f.set(c, f.absent >= 0 && !h5::has_attribute(file, f.name) ? f.absent : h5::read_int_attribute(file, f.name));
}
// Throws sp::Error "cannot load checkpoint '<path>': its model (<field> <value>, ...) differs from
// this one (...)" unless the checkpoint's configuration and this model's agree in every field.
template <typename Config, std::size_t N>
void require_same_model(const std::string& path, const Config& checkpoint, const Config& model,
                        const ConfigField<Config> (&fields)[N]) {
  std::vector<std::string> theirs, ours;
  bool same = true;
  for (const ConfigField<Config>& f : fields) {
    theirs.push_back(fmt::format("{} {}", f.name, f.value(checkpoint)));
    ours.push_back(fmt::format("{} {}", f.name, f.value(model)));
    same = same && f.value(checkpoint) == f.value(model);
  }
  if (!same)
    fail("cannot load checkpoint '{}': its model ({}) differs from this one ({})", path, fmt::join(theirs, ", "),
         fmt::join(ours, ", "));
}

// Loads path's checkpoint into a model configured as `model`, the counterpart of
// write_checkpoint_file: reads its information through info_of(file), requires the same model,
// verifies /check, then read(file) reads the tensors. One open for the configuration and the
// tensors, so the data read is the data verified; errors name the path.
template <typename InfoOf, typename Config, std::size_t N, typename Read>
void read_checkpoint_file(const std::string& path, const CheckpointFormat& format, const InfoOf& info_of,
                          const Config& model, const ConfigField<Config> (&fields)[N], const Read& read) {
  const h5::File f = load_or_fail(path, [&] { return open_checkpoint_file(path, format); });
  const auto info = load_or_fail(path, [&] { return info_of(f); });
  require_same_model(path, info.config, model, fields);
  load_or_fail(path, [&] {
    verify_checkpoint_data(f);  // /check: the reference outputs, for the Python loaders
    read(f);
  });
}

// One dataset of shape dims (a scalar when dims is empty) from data of mem_type, stored as file_type.
void write_dataset(hid_t parent, const std::string& name, hid_t mem_type, hid_t file_type,
                   const std::vector<hsize_t>& dims, const void* data);
// Reads a dataset as mem_type; throws sp::Error unless it exists with exactly the shape dims and
// a type of mem_type's class, and "... fails its Fletcher32 checksum (corrupt)" for damaged data.
void read_dataset(hid_t parent, const std::string& name, const std::vector<hsize_t>& dims, hid_t mem_type, void* out);
// A tensor table in a group: one float32 dataset per tensor, named and shaped as the table says,
// from (write) or into (read, every shape checked) base + the tensor's offset.
void write_tensors(hid_t group, const std::vector<TensorInfo>& tensors, const float* base);
void read_tensors(hid_t group, const std::vector<TensorInfo>& tensors, float* base);
// A tensor's shape as HDF5 dimensions.
std::vector<hsize_t> dims_of(const TensorInfo& t);

}  // namespace sp::train
