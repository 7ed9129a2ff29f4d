// A small RAII layer over the HDF5 C API: handles that close themselves, checked calls that throw
// sp::Error with context, and typed attribute helpers. Only what scaleprobe needs.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sp::h5 {

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
std::string read_string_attribute(hid_t obj, const std::string& name);
std::int64_t read_int_attribute(hid_t obj, const std::string& name);
std::vector<std::string> attribute_names(hid_t obj);
std::vector<std::string> child_names(hid_t group);  // links in creation order

}  // namespace sp::h5
