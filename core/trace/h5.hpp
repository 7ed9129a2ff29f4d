// A small RAII layer over the HDF5 C API: handles that close themselves, checked calls that throw
// sp::Error with context, typed attribute helpers and checksummed dataset layouts. Only what
// scaleprobe needs. Every read checks the dataspace and datatype before reading: a crafted file
// cannot make a reader write past its buffer. Errors name the object ("/group/name"); callers
// add the file.
#pragma once
#include <hdf5.h>

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sp::h5 {

// The 8 bytes that start an HDF5 superblock (the HDF5 file format specification).
inline constexpr std::array<unsigned char, 8> kSignature = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

// Silence HDF5's own error-stack printing: our errors are one line (call once per process).
void quiet_errors();
// Throws sp::Error("<what>") when id < 0 (HDF5 returns negative ids/status on failure).
hid_t check(hid_t id, const char* what);
inline herr_t check_status(herr_t s, const char* what) { return static_cast<herr_t>(check(s, what)); }

template <herr_t (*Close)(hid_t)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  ~Handle() { reset(); }
  void reset() {
    if (id_ >= 0) Close(id_);
    id_ = H5I_INVALID_HID;
  }
  // Close now and report failure (a destructor cannot).
  void close(const char* what) {
    hid_t id = std::exchange(id_, H5I_INVALID_HID);
    if (id >= 0) check_status(Close(id), what);
  }
  // Give up ownership without closing.
  hid_t release() { return std::exchange(id_, H5I_INVALID_HID); }
  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

using File = Handle<H5Fclose>;
using Group = Handle<H5Gclose>;
using Dataset = Handle<H5Dclose>;
using Dataspace = Handle<H5Sclose>;
using Datatype = Handle<H5Tclose>;
using Attribute = Handle<H5Aclose>;
using PropertyList = Handle<H5Pclose>;

Group create_group(hid_t parent, const std::string& name);
Group open_group(hid_t parent, const std::string& name);
bool exists(hid_t parent, const std::string& path);
// Fixed-length, null-padded ASCII string type of `length` bytes (>= 1). Fixed-length strings can
// be written collectively by parallel HDF5, which variable-length ones cannot.
Datatype fixed_string_type(std::size_t length);

void write_attribute(hid_t obj, const std::string& name, const std::string& value);
void write_attribute(hid_t obj, const std::string& name, std::int64_t value);
void write_attribute(hid_t obj, const std::string& name, double value);
bool has_attribute(hid_t obj, const std::string& name);
// Each reads a single value (a scalar or one-element attribute) of the right class; anything
// else (an array, another type, an oversized type) is an sp::Error naming the attribute.
std::string read_string_attribute(hid_t obj, const std::string& name);
std::int64_t read_int_attribute(hid_t obj, const std::string& name);
double read_real_attribute(hid_t obj, const std::string& name);  // an integer or float attribute
// The attribute as text (string as is, numbers formatted), for printing.
std::string read_attribute_as_text(hid_t obj, const std::string& name);

// "/path/in/file" of an object, for error messages ("?" if HDF5 cannot tell).
std::string object_name(hid_t obj);
// The dimensions of a simple dataspace (empty for a scalar); throws on a null or bad dataspace.
std::vector<hsize_t> dims_of(hid_t space, const std::string& what);

// Dataset creation properties with HDF5's Fletcher32 checksum: chunked (chunks of at most about
// 1 MiB) and checksummed when the dataset has data; contiguous and unchecksummed when any
// dimension is 0 or it is a scalar (neither can be chunked). elem_size is the stored element's.
PropertyList checksummed_layout(const std::vector<hsize_t>& dims, std::size_t elem_size);
// Whether a dataset's stored data carries a Fletcher32 checksum.
bool has_checksum(hid_t dataset);
// H5Dread that reports a failure on a checksummed dataset as "fails its checksum (corrupt)".
void read_dataset_data(hid_t dataset, hid_t mem_type, void* out, const std::string& what);
std::vector<std::string> attribute_names(hid_t obj);
std::vector<std::string> child_names(hid_t group);  // links in creation order

}  // namespace sp::h5
