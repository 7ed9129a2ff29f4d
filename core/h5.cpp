#include "h5.hpp"

#include "error.hpp"

namespace sp::h5 {

void quiet_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

hid_t check(hid_t id, const char* what) {
  if (id < 0) fail("HDF5: {} failed", what);
  return id;
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

bool exists(hid_t parent, const std::string& path) {
  return H5Lexists(parent, path.c_str(), H5P_DEFAULT) > 0;
}

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

std::string read_string_attribute(hid_t obj, const std::string& name) {
  Attribute a(check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), ("open attribute " + name).c_str()));
  Datatype file_type(check(H5Aget_type(a), "H5Aget_type"));
  if (H5Tget_class(file_type) != H5T_STRING) fail("attribute '{}' is not a string", name);
  if (H5Tis_variable_str(file_type) > 0) {
    Datatype mem(check(H5Tcopy(H5T_C_S1), "H5Tcopy"));
    H5Tset_size(mem, H5T_VARIABLE);
    char* p = nullptr;
    check_status(H5Aread(a, mem, &p), "H5Aread");
    std::string s = p ? p : "";
    H5free_memory(p);
    return s;
  }
  std::size_t n = H5Tget_size(file_type);
  std::string s(n, '\0');
  Datatype mem = fixed_string_type(n);
  check_status(H5Aread(a, mem, s.data()), ("read attribute " + name).c_str());
  s.resize(s.find('\0') == std::string::npos ? n : s.find('\0'));
  return s;
}

std::int64_t read_int_attribute(hid_t obj, const std::string& name) {
  Attribute a(check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), ("open attribute " + name).c_str()));
  Datatype file_type(check(H5Aget_type(a), "H5Aget_type"));
  if (H5Tget_class(file_type) != H5T_INTEGER) fail("attribute '{}' is not an integer", name);
  std::int64_t v = 0;
  check_status(H5Aread(a, H5T_NATIVE_INT64, &v), ("read attribute " + name).c_str());
  return v;
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
