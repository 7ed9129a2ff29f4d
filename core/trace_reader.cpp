#include <cstring>

#include "error.hpp"
#include "trace.hpp"

namespace sp {

TraceReader::TraceReader(const std::filesystem::path& path) : path_(path) {
  h5::quiet_errors();
  const std::string p = path.string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail("{}: trace file not found", p);
  if (p.ends_with(".partial")) fail("{}: incomplete trace (a run still writing it, or one that died)", p);
  if (H5Fis_hdf5(p.c_str()) <= 0) fail("{}: not a readable HDF5 file (corrupt or truncated)", p);
  hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) fail("{}: cannot open as HDF5 (corrupt or truncated)", p);
  file_ = h5::File(f);
  try {
    if (!h5::has_attribute(file_, "schema") || h5::read_string_attribute(file_, "schema") != kTraceSchemaName)
      fail("not a scaleprobe trace (no schema='{}' attribute)", kTraceSchemaName);
    version_ = h5::read_int_attribute(file_, "schema_version");
    if (version_ != kTraceSchemaVersion)
      fail("unsupported trace schema version {} (this build reads version {})", version_, kTraceSchemaVersion);
    if (!h5::has_attribute(file_, "complete") || h5::read_int_attribute(file_, "complete") != 1)
      fail("incomplete trace (the run did not finish writing it)");
    kind_ = h5::read_string_attribute(file_, "kind");
    nranks_ = h5::read_int_attribute(file_, "nranks");
    if (!h5::exists(file_, "provenance")) fail("missing /provenance group");
    for (const std::string& name : h5::child_names(file_)) {
      if (name == "provenance") continue;
      h5::Group g = h5::open_group(file_, name);
      TraceTableInfo info{name, h5::read_string_attribute(g, "scope"),
                          static_cast<std::size_t>(h5::read_int_attribute(g, "rows"))};
      for (const std::string& col : h5::child_names(g)) {
        h5::Dataset ds(h5::check(H5Dopen2(g, col.c_str(), H5P_DEFAULT), "open dataset"));
        h5::Dataspace sp(h5::check(H5Dget_space(ds), "H5Dget_space"));
        hssize_t n = H5Sget_simple_extent_npoints(sp);
        if (n < 0 || static_cast<std::size_t>(n) != info.rows)
          fail("table '{}' column '{}' has {} rows, expected {}", name, col, n, info.rows);
      }
      if (info.scope == "per_rank" && info.rows > 0) {
        Table t = read_table(name);
        for (std::int64_t r : std::get<std::vector<std::int64_t>>(t.find("rank")->values))
          if (r < 0 || r >= nranks_) fail("table '{}' names rank {} of {}", name, r, nranks_);
      }
      tables_.push_back(info);
    }
  } catch (const Error& e) {
    fail("{}: {}", p, e.what());
  }
}

std::string TraceReader::root_attribute(const std::string& name) const {
  if (!h5::has_attribute(file_, name)) return "";
  h5::Attribute a(h5::check(H5Aopen(file_, name.c_str(), H5P_DEFAULT), "H5Aopen"));
  h5::Datatype t(h5::check(H5Aget_type(a), "H5Aget_type"));
  if (H5Tget_class(t) == H5T_STRING) return h5::read_string_attribute(file_, name);
  if (H5Tget_class(t) == H5T_INTEGER) return std::to_string(h5::read_int_attribute(file_, name));
  double v = 0;
  h5::check_status(H5Aread(a, H5T_NATIVE_DOUBLE, &v), "H5Aread");
  return fmt::format("{}", v);
}

std::string TraceReader::provenance(const std::string& key) const {
  h5::Group g = h5::open_group(file_, "provenance");
  return h5::has_attribute(g, key) ? h5::read_string_attribute(g, key) : "";
}

Table TraceReader::read_table(const std::string& name) const {
  h5::Group g = h5::open_group(file_, name);
  Table t;
  for (const std::string& col : h5::child_names(g)) {
    h5::Dataset ds(h5::check(H5Dopen2(g, col.c_str(), H5P_DEFAULT), "open dataset"));
    h5::Datatype type(h5::check(H5Dget_type(ds), "H5Dget_type"));
    h5::Dataspace space(h5::check(H5Dget_space(ds), "H5Dget_space"));
    auto n = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space));
    std::string unit = h5::has_attribute(ds, "unit") ? h5::read_string_attribute(ds, "unit") : "";
    std::string desc = h5::has_attribute(ds, "description") ? h5::read_string_attribute(ds, "description") : "";
    switch (H5Tget_class(type)) {
      case H5T_INTEGER: {
        auto& v = t.ints(col, unit, desc);
        v.resize(n);
        if (n) h5::check_status(H5Dread(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "H5Dread");
        break;
      }
      case H5T_FLOAT: {
        auto& v = t.reals(col, unit, desc);
        v.resize(n);
        if (n) h5::check_status(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "H5Dread");
        break;
      }
      case H5T_STRING: {
        std::size_t len = H5Tget_size(type);
        std::vector<char> buf(n * len);
        h5::Datatype mem = h5::fixed_string_type(len);
        if (n) h5::check_status(H5Dread(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), "H5Dread");
        auto& v = t.strings(col, desc);
        for (std::size_t i = 0; i < n; ++i) v.emplace_back(buf.data() + i * len, strnlen(buf.data() + i * len, len));
        break;
      }
      default:
        fail("{}: table '{}' column '{}' has an unsupported type", path_.string(), name, col);
    }
  }
  return t;
}

}  // namespace sp
