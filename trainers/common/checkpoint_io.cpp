#include "trainers/common/checkpoint_io.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/ranges.h>

#include "core/error.hpp"

namespace sp::train {

void write_checkpoint_file(const std::string& path, const CheckpointFormat& format,
                           const std::function<void(hid_t file)>& write) {
  const std::string partial = path + ".partial";
  try {
    h5::quiet_errors();
    {
      h5::File f(H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
      if (f.get() < 0) fail("cannot create file");
      h5::write_attribute(f, "format", std::string(format.format));
      h5::write_attribute(f, "format_version", format.version);
      write(f);
      f.close("close checkpoint");
    }
    std::filesystem::rename(partial, path);
  } catch (const std::exception& e) {
    std::error_code ec;
    std::filesystem::remove(partial, ec);
    fail("cannot write checkpoint '{}': {}", path, e.what());
  }
}

h5::File open_checkpoint_file(const std::string& path, const CheckpointFormat& format) {
  h5::quiet_errors();
  if (!std::filesystem::exists(path)) fail("no such file");
  if (H5Fis_hdf5(path.c_str()) <= 0) fail("not a readable HDF5 file (corrupt or truncated)");
  h5::File f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (f.get() < 0) fail("not a readable HDF5 file (corrupt or truncated)");
  if (!h5::has_attribute(f, "format") || h5::read_string_attribute(f, "format") != format.format)
    fail("not a scaleprobe {} checkpoint", format.name);
  const std::int64_t version = h5::read_int_attribute(f, "format_version");
  if (version != format.version) fail("checkpoint format version {} is not {}", version, format.version);
  return f;
}

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

}  // namespace sp::train
