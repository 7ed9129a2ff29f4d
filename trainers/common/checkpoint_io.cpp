#include "trainers/common/checkpoint_io.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <span>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/ranges.h>

#include "core/run/error.hpp"
#include "core/trace/file_digest.hpp"
#include "core/trace/h5_memory_file.hpp"
#include "core/trace/h5_open.hpp"
#include "core/run/sizes.hpp"

namespace sp::train {

namespace {

// Reads every dataset of file's group so that HDF5 verifies its checksums; throws sp::Error
// naming a damaged one.
void verify_group_data(hid_t file, const std::string& group) {
  if (!h5::exists(file, group)) fail("group '/{}' is missing", group);
  h5::Group g = h5::open_group(file, group);
  for (const std::string& name : h5::child_names(g)) {
    const std::string what = fmt::format("dataset '/{}/{}'", group, name);
    h5::Dataset d(H5Dopen2(g, name.c_str(), H5P_DEFAULT));
    if (d.get() < 0) fail("cannot open {} (corrupt, or not a dataset)", what);
    h5::Dataspace space(h5::check(H5Dget_space(d), ("dataspace of " + what).c_str()));
    h5::Datatype type(h5::check(H5Dget_type(d), ("type of " + what).c_str()));
    h5::Datatype native(h5::check(H5Tget_native_type(type, H5T_DIR_ASCEND), ("type of " + what).c_str()));
    std::size_t bytes = H5Tget_size(native);
    for (hsize_t n : h5::dims_of(space, what)) bytes = checked_product(bytes, n, what);
    std::vector<unsigned char> buf(bytes);
    if (bytes > 0) h5::read_dataset_data(d, native, buf.data(), what);
  }
}

// The checkpoint is built in memory and written with plain system calls, so that a full disk is
// one error line and never reaches libhdf5 (core/trace/h5_memory_file.hpp). Rank 0 holds the whole
// checkpoint (parameters and optimizer state) in memory while it is written.
h5::MemoryFile checkpoint_image(const CheckpointFormat& format, const std::function<void(hid_t file)>& write) {
  h5::quiet_errors();
  // HDF5 1.8 object headers and superblock carry checksums of their own, which covers every
  // attribute and the compact (scalar) datasets; array datasets carry Fletcher32 (write_dataset).
  h5::PropertyList fapl(h5::check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"));
  h5::check_status(H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18), "H5Pset_libver_bounds");
  h5::PropertyList fcpl = digest_file_creation();  // room for the whole-file digest
  h5::MemoryFile file = h5::build_memory_file(fcpl, fapl, [&](hid_t f) {
    h5::write_attribute(f, "format", std::string(format.format));
    h5::write_attribute(f, "format_version", format.version);
    write(f);
  });
  stamp_image_digest(file.bytes());
  return file;
}

// Writes bytes to a new file and syncs it; throws sp::Error with the system's reason (what names
// the file in the message).
void write_whole_file(const std::string& path, const std::string& what, std::span<const unsigned char> bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create {}: {}", what, std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = n < 0 ? errno : EIO;
      ::close(fd);
      fail("cannot write {}: {}", what, std::strerror(e));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    fail("cannot sync {}: {}", what, std::strerror(e));
  }
  if (::close(fd) != 0) fail("cannot close {}: {}", what, std::strerror(errno));
}

}  // namespace

void write_checkpoint_file(const std::string& path, const CheckpointFormat& format,
                           const std::function<void(hid_t file)>& write) {
  const std::string partial = path + ".partial";
  try {
    h5::MemoryFile image = checkpoint_image(format, write);
    write_whole_file(partial, "the .partial file", image.bytes());
    std::filesystem::rename(partial, path);  // the digest went in before: a file under its name carries it
  } catch (const std::exception& e) {
    std::error_code ec;
    std::filesystem::remove(partial, ec);
    fail("cannot write checkpoint '{}': {}", path, one_line_message(e));
  }
}

namespace {

void check_format(hid_t f, const CheckpointFormat& format, bool digest) {
  if (!h5::has_attribute(f, "format") || h5::read_string_attribute(f, "format") != format.format)
    fail("not a scaleprobe {} checkpoint", format.name);
  const std::int64_t version = h5::read_int_attribute(f, "format_version");
  if (version < format.oldest_version || version > format.version)
    fail("checkpoint format version {} is not one this build reads ({} to {})", version, format.oldest_version,
         format.version);
  if (version >= format.first_digest_version && !digest)
    fail("corrupt: format version {} requires a whole-file digest and the file has none", version);
}

}  // namespace

h5::File open_checkpoint_file(const std::string& path, const CheckpointFormat& format) {
  h5::quiet_errors();
  if (!std::filesystem::exists(path)) fail("no such file");
  // The digest is checked on the bytes libhdf5 then opens; a file without one (an older format
  // version) is read whole in an isolated child first (core/trace/h5_open.hpp).
  OpenedH5 opened = open_h5_for_reading(path, [&](hid_t f) {
    check_format(f, format, false);
    for (const std::string& name : h5::child_names(f)) {  // every group's datasets, read whole
      H5O_info_t info;
      if (H5Oget_info_by_name2(f, name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0)
        fail("cannot open '/{}' (corrupt)", name);
      if (info.type == H5O_TYPE_GROUP) verify_group_data(f, name);
    }
  });
  check_format(opened.file, format, opened.digest_verified);
  return std::move(opened.file);
}

void verify_checkpoint_data(hid_t file) { verify_group_data(file, "check"); }

void write_dataset(hid_t parent, const std::string& name, hid_t mem_type, hid_t file_type,
                   const std::vector<hsize_t>& dims, const void* data) {
  h5::Dataspace space(h5::check(
      dims.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(int(dims.size()), dims.data(), nullptr), "H5Screate"));
  h5::PropertyList dcpl = h5::checksummed_layout(dims, H5Tget_size(file_type));
  // A scalar cannot be chunked: stored compact, inside its (checksummed) object header.
  if (dims.empty()) h5::check_status(H5Pset_layout(dcpl, H5D_COMPACT), "H5Pset_layout");
  h5::Dataset d(h5::check(H5Dcreate2(parent, name.c_str(), file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                          ("create dataset " + name).c_str()));
  h5::check_status(H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), ("write dataset " + name).c_str());
  d.close(("close dataset " + name).c_str());
}

void read_dataset(hid_t parent, const std::string& name, const std::vector<hsize_t>& dims, hid_t mem_type, void* out) {
  const std::string where = h5::object_name(parent);
  const std::string what = fmt::format("dataset '{}{}{}'", where, where.ends_with('/') ? "" : "/", name);
  if (!h5::exists(parent, name)) fail("{} is missing", what);
  h5::Dataset d(H5Dopen2(parent, name.c_str(), H5P_DEFAULT));
  if (d.get() < 0) fail("cannot open {} (corrupt, or not a dataset)", what);
  h5::Dataspace space(h5::check(H5Dget_space(d), ("dataspace of " + what).c_str()));
  const std::vector<hsize_t> got = h5::dims_of(space, what);
  if (got != dims) fail("{} has shape ({}), expected ({})", what, fmt::join(got, ", "), fmt::join(dims, ", "));
  h5::Datatype type(h5::check(H5Dget_type(d), ("type of " + what).c_str()));
  if (H5Tget_class(type) != H5Tget_class(mem_type) || H5Tget_size(type) > 8)
    fail("{} has another type than expected ({} of {} bytes, expected {} of {})", what, int(H5Tget_class(type)),
         H5Tget_size(type), int(H5Tget_class(mem_type)), H5Tget_size(mem_type));
  h5::read_dataset_data(d, mem_type, out, what);
}

std::vector<hsize_t> dims_of(const TensorInfo& t) { return std::vector<hsize_t>(t.shape.begin(), t.shape.end()); }

void write_tensors(hid_t group, const std::vector<TensorInfo>& tensors, const float* base) {
  for (const TensorInfo& t : tensors)
    write_dataset(group, t.name, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, dims_of(t), base + t.offset);
}

void read_tensors(hid_t group, const std::vector<TensorInfo>& tensors, float* base) {
  for (const TensorInfo& t : tensors) read_dataset(group, t.name, dims_of(t), H5T_NATIVE_FLOAT, base + t.offset);
}

}  // namespace sp::train
