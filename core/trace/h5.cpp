#include "core/trace/h5.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/run/error.hpp"
#include "core/run/sizes.hpp"

namespace sp::h5 {

void quiet_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

namespace {
herr_t find_checksum_error(unsigned, const H5E_error2_t* e, void* found) {
  if (e->desc && (std::strstr(e->desc, "checksum") || std::strstr(e->desc, "Fletcher32")))
    *static_cast<bool*>(found) = true;
  return 0;
}
// Whether the error HDF5 just raised is a failed checksum (Fletcher32 on data, or a metadata
// checksum). Must run before the next HDF5 call, which clears the error stack.
bool last_error_is_checksum() {
  bool found = false;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, find_checksum_error, &found);
  return found;
}
}  // namespace

hid_t check(hid_t id, const char* what) {
  if (id < 0) {
    if (last_error_is_checksum()) fail("HDF5: {} failed: checksum mismatch (corrupt file)", what);
    fail("HDF5: {} failed", what);
  }
  return id;
}

std::string object_name(hid_t obj) {
  const ssize_t n = H5Iget_name(obj, nullptr, 0);
  if (n <= 0) return "?";
  std::string s(static_cast<std::size_t>(n) + 1, '\0');
  H5Iget_name(obj, s.data(), s.size());
  s.resize(static_cast<std::size_t>(n));
  return s;
}

std::vector<hsize_t> dims_of(hid_t space, const std::string& what) {
  switch (H5Sget_simple_extent_type(space)) {
    case H5S_SCALAR:
      return {};
    case H5S_SIMPLE: {
      const int rank = H5Sget_simple_extent_ndims(space);
      if (rank < 0 || rank > H5S_MAX_RANK) fail("{} has an unreadable shape", what);
      std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
      if (rank > 0 && H5Sget_simple_extent_dims(space, dims.data(), nullptr) < 0)
        fail("{} has an unreadable shape", what);
      return dims;
    }
    case H5S_NULL:
      fail("{} holds no value (null dataspace)", what);
    default:
      fail("{} has an unreadable dataspace", what);
  }
}

PropertyList checksummed_layout(const std::vector<hsize_t>& dims, std::size_t elem_size) {
  PropertyList dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"));
  if (dims.empty() || elem_size == 0 || std::ranges::find(dims, hsize_t{0}) != dims.end()) return dcpl;
  // Chunks of about 1 MiB: whole trailing rows when they fit, shrinking from the slowest dimension.
  constexpr hsize_t kChunkBytes = hsize_t{1} << 20;
  std::vector<hsize_t> chunk = dims;
  for (std::size_t i = 0; i < chunk.size(); ++i) {
    hsize_t bytes = elem_size;
    for (hsize_t d : chunk) bytes *= d;  // <= the dataset's size, which the caller holds in memory
    if (bytes <= kChunkBytes) break;
    const hsize_t inner = bytes / chunk[i];
    chunk[i] = std::clamp<hsize_t>(kChunkBytes / inner, 1, dims[i]);
  }
  check_status(H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data()), "H5Pset_chunk");
  check_status(H5Pset_fletcher32(dcpl), "H5Pset_fletcher32");
  return dcpl;
}

bool has_checksum(hid_t dataset) {
  PropertyList dcpl(check(H5Dget_create_plist(dataset), "H5Dget_create_plist"));
  const int n = H5Pget_nfilters(dcpl);
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0, config = 0;
    std::size_t nelmts = 0;
    if (H5Pget_filter2(dcpl, static_cast<unsigned>(i), &flags, &nelmts, nullptr, 0, nullptr, &config) ==
        H5Z_FILTER_FLETCHER32)
      return true;
  }
  return false;
}

void read_dataset_data(hid_t dataset, hid_t mem_type, void* out, const std::string& what) {
  if (H5Dread(dataset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0) return;
  if (last_error_is_checksum()) fail("{}: data fails its Fletcher32 checksum (corrupt)", what);
  fail("{}: cannot read its data (corrupt or truncated)", what);
}

Group create_group(hid_t parent, const std::string& name) {
  PropertyList lcpl(check(H5Pcreate(H5P_LINK_CREATE), "H5Pcreate"));
  PropertyList gcpl(check(H5Pcreate(H5P_GROUP_CREATE), "H5Pcreate"));
  // Track creation order so readers see columns in the order they were written.
  check_status(H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
               "H5Pset_link_creation_order");
  check_status(H5Pset_create_intermediate_group(lcpl, 1), "H5Pset_create_intermediate_group");
  return Group(check(H5Gcreate2(parent, name.c_str(), lcpl, gcpl, H5P_DEFAULT), ("create group " + name).c_str()));
}

Group open_group(hid_t parent, const std::string& name) {
  return Group(check(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), ("open group " + name).c_str()));
}

bool exists(hid_t parent, const std::string& path) { return H5Lexists(parent, path.c_str(), H5P_DEFAULT) > 0; }

Datatype fixed_string_type(std::size_t length) {
  Datatype t(check(H5Tcopy(H5T_C_S1), "H5Tcopy"));
  check_status(H5Tset_size(t, length == 0 ? 1 : length), "H5Tset_size");
  check_status(H5Tset_strpad(t, H5T_STR_NULLPAD), "H5Tset_strpad");
  return t;
}

namespace {
void write_scalar_attribute(hid_t obj, const std::string& name, hid_t type, const void* value) {
  if (H5Aexists(obj, name.c_str()) > 0) check_status(H5Adelete(obj, name.c_str()), "H5Adelete");
  Dataspace space(check(H5Screate(H5S_SCALAR), "H5Screate"));
  Attribute a(check(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT),
                    ("create attribute " + name).c_str()));
  check_status(H5Awrite(a, type, value), ("write attribute " + name).c_str());
}
}  // namespace

void write_attribute(hid_t obj, const std::string& name, const std::string& value) {
  Datatype t = fixed_string_type(value.size());
  std::string padded = value.empty() ? std::string(1, '\0') : value;
  write_scalar_attribute(obj, name, t, padded.data());
}

void write_attribute(hid_t obj, const std::string& name, std::int64_t value) {
  write_scalar_attribute(obj, name, H5T_NATIVE_INT64, &value);
}

void write_attribute(hid_t obj, const std::string& name, double value) {
  write_scalar_attribute(obj, name, H5T_NATIVE_DOUBLE, &value);
}

bool has_attribute(hid_t obj, const std::string& name) { return H5Aexists(obj, name.c_str()) > 0; }

namespace {

// An attribute opened and checked to hold exactly one value (a scalar, or an array of one
// element: the reads below have room for one), with its file type and that type's class; where
// names it in errors.
struct SingleValue {
  Attribute attribute;
  Datatype file_type;
  H5T_class_t type_class = H5T_NO_CLASS;
  std::string where;
};

SingleValue open_single_value(hid_t obj, const std::string& name) {
  SingleValue v;
  v.where = fmt::format("attribute '{}' of {}", name, object_name(obj));
  const std::string& where = v.where;
  const htri_t exists = H5Aexists(obj, name.c_str());
  if (exists < 0) fail("cannot look up {} (corrupt{})", where, last_error_is_checksum() ? ": checksum mismatch" : "");
  if (exists == 0) fail("{} is missing", where);
  v.attribute = Attribute(H5Aopen(obj, name.c_str(), H5P_DEFAULT));
  if (v.attribute.get() < 0) fail("cannot open {} (corrupt)", where);
  Dataspace space(H5Aget_space(v.attribute));
  if (space.get() < 0) fail("{} has an unreadable dataspace", where);
  std::size_t n = 1;
  for (hsize_t d : dims_of(space, where)) n = checked_product(n, d, where);
  if (n != 1) fail("{} holds {} values, expected one", where, n);
  v.file_type = Datatype(H5Aget_type(v.attribute));
  if (v.file_type.get() < 0) fail("{} has an unreadable type", where);
  v.type_class = H5Tget_class(v.file_type);
  return v;
}

// The value of an attribute opened by open_single_value, as a string or a 64-bit number.
std::string string_value(const SingleValue& v) {
  const hid_t a = v.attribute, file_type = v.file_type;
  const std::string& where = v.where;
  const H5T_cset_t cset = H5Tget_cset(file_type);
  if (H5Tis_variable_str(file_type) > 0) {
    Datatype mem(check(H5Tcopy(H5T_C_S1), "H5Tcopy"));
    check_status(H5Tset_size(mem, H5T_VARIABLE), "H5Tset_size");
    if (cset >= 0) H5Tset_cset(mem, cset);
    char* p = nullptr;
    if (H5Aread(a, mem, &p) < 0) fail("cannot read {} (corrupt)", where);
    std::string s = p ? p : "";
    H5free_memory(p);
    return s;
  }
  // Attributes hold at most 64 KiB in the object header; dense storage allows more, not this much.
  constexpr std::size_t kMaxLength = std::size_t{1} << 24;
  const std::size_t n = H5Tget_size(file_type);
  if (n == 0 || n > kMaxLength) fail("{} has an implausible string length {}", where, n);
  std::string s(n, '\0');
  Datatype mem = fixed_string_type(n);
  if (cset >= 0) H5Tset_cset(mem, cset);
  if (H5Aread(a, mem, s.data()) < 0) fail("cannot read {} (corrupt)", where);
  s.resize(std::min(s.find('\0'), n));
  return s;
}

template <typename Number>  // std::int64_t or double
Number number_value(const SingleValue& v) {
  static_assert(sizeof(Number) == 8);
  if (H5Tget_size(v.file_type) > sizeof(Number)) fail("{} is wider than 64 bits", v.where);
  Number x = 0;
  const hid_t mem_type = std::is_floating_point_v<Number> ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
  if (H5Aread(v.attribute, mem_type, &x) < 0) fail("cannot read {} (corrupt)", v.where);
  return x;
}

}  // namespace

std::string read_string_attribute(hid_t obj, const std::string& name) {
  const SingleValue v = open_single_value(obj, name);
  if (v.type_class != H5T_STRING) fail("{} is not a string", v.where);
  return string_value(v);
}

std::int64_t read_int_attribute(hid_t obj, const std::string& name) {
  const SingleValue v = open_single_value(obj, name);
  if (v.type_class != H5T_INTEGER) fail("{} is not an integer", v.where);
  return number_value<std::int64_t>(v);
}

double read_real_attribute(hid_t obj, const std::string& name) {
  const SingleValue v = open_single_value(obj, name);
  if (v.type_class != H5T_FLOAT && v.type_class != H5T_INTEGER) fail("{} is not a number", v.where);
  return number_value<double>(v);
}

std::string read_attribute_as_text(hid_t obj, const std::string& name) {
  const SingleValue v = open_single_value(obj, name);
  if (v.type_class == H5T_STRING) return string_value(v);
  if (v.type_class == H5T_INTEGER) return std::to_string(number_value<std::int64_t>(v));
  if (v.type_class == H5T_FLOAT) return fmt::format("{}", number_value<double>(v));
  fail("{} has an unsupported type (not a string or number)", v.where);
}

namespace {
herr_t collect_attr(hid_t, const char* name, const H5A_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}
herr_t collect_link(hid_t, const char* name, const H5L_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}
}  // namespace

std::vector<std::string> attribute_names(hid_t obj) {
  std::vector<std::string> names;
  hsize_t idx = 0;
  check_status(H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_attr, &names), "H5Aiterate2");
  return names;
}

std::vector<std::string> child_names(hid_t group) {
  std::vector<std::string> names;
  hsize_t idx = 0;
  // Creation order when tracked, name order otherwise.
  if (H5Literate(group, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, collect_link, &names) < 0) {
    names.clear();
    idx = 0;
    check_status(H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_link, &names), "H5Literate");
  }
  return names;
}

}  // namespace sp::h5
