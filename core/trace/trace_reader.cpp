#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/run/error.hpp"
#include "core/trace/h5_open.hpp"
#include "core/run/sizes.hpp"
#include "core/trace/trace.hpp"

namespace sp {

namespace {

// One column of a table as stored: 1-D, of a supported class and element size.
struct ColumnData {
  h5::Dataset ds;
  h5::Datatype type;
  H5T_class_t cls = H5T_NO_CLASS;
  std::size_t rows = 0, elem_size = 0;
};

ColumnData open_column(hid_t group, const std::string& table, const std::string& col) {
  const std::string what = fmt::format("table '{}' column '{}'", table, col);
  H5O_info_t info;
  if (H5Oget_info_by_name2(group, col.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0 || info.type != H5O_TYPE_DATASET)
    fail("{} is not a dataset", what);
  ColumnData c;
  c.ds = h5::Dataset(h5::check(H5Dopen2(group, col.c_str(), H5P_DEFAULT), ("open " + what).c_str()));
  c.type = h5::Datatype(h5::check(H5Dget_type(c.ds), ("type of " + what).c_str()));
  h5::Dataspace space(h5::check(H5Dget_space(c.ds), ("dataspace of " + what).c_str()));
  const std::vector<hsize_t> dims = h5::dims_of(space, what);
  if (dims.size() != 1) fail("{} is {}-D, expected 1-D", what, dims.size());
  c.rows = static_cast<std::size_t>(dims[0]);
  c.cls = H5Tget_class(c.type);
  c.elem_size = H5Tget_size(c.type);
  switch (c.cls) {
    case H5T_INTEGER:
    case H5T_FLOAT:
      if (c.elem_size == 0 || c.elem_size > 8) fail("{} has {}-byte numbers, expected at most 8", what, c.elem_size);
      break;
    case H5T_STRING:
      if (H5Tis_variable_str(c.type) > 0) fail("{} holds variable-length strings, expected fixed-length", what);
      if (c.elem_size == 0) fail("{} has 0-byte strings", what);
      break;
    default:
      fail("{} has an unsupported type (not integer, float or fixed-length string)", what);
  }
  return c;
}

const char* type_name(const Column::Values& v) {
  if (std::holds_alternative<std::vector<std::int64_t>>(v)) return "integer";
  if (std::holds_alternative<std::vector<double>>(v)) return "float";
  return "string";
}

template <typename T>
constexpr const char* type_name_of() {
  if constexpr (std::is_same_v<T, std::int64_t>)
    return "integer";
  else if constexpr (std::is_same_v<T, double>)
    return "float";
  else
    return "string";
}

}  // namespace

template <typename T>
const std::vector<T>& column_values(const Table& table, const std::string& table_name, const std::string& column) {
  const Column* c = table.find(column);
  if (!c) fail("table '{}' has no '{}' column", table_name, column);
  const auto* v = std::get_if<std::vector<T>>(&c->values);
  if (!v)
    fail("table '{}' column '{}' is {}, expected {}", table_name, column, type_name(c->values), type_name_of<T>());
  return *v;
}
template const std::vector<std::int64_t>& column_values(const Table&, const std::string&, const std::string&);
template const std::vector<double>& column_values(const Table&, const std::string&, const std::string&);
template const std::vector<std::string>& column_values(const Table&, const std::string&, const std::string&);

TraceReader::TraceReader(const std::filesystem::path& path) : path_(path) {
  h5::quiet_errors();
  const std::string p = path.string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail("{}: trace file not found", p);
  if (p.ends_with(".partial")) fail("{}: incomplete trace (a run still writing it, or one that died)", p);
  try {
    // The digest is checked before libhdf5 sees a byte; a trace without one (schema 1 or 2, or a
    // stripped one) is read and checked whole in an isolated child first (core/trace/h5_open.hpp).
    OpenedH5 opened = open_h5_for_reading(path, [&](hid_t f) {
      TraceReader isolated;
      H5Iinc_ref(f);  // the isolated reader's handle closes its own reference
      isolated.file_ = h5::File(f);
      isolated.check_file();
      isolated.read_all_tables();
    });
    file_ = std::move(opened.file);
    digest_verified_ = opened.digest_verified;
    check_file();
  } catch (const std::exception& e) {
    fail("{}: {}", p, one_line_message(e));
  }
}

void TraceReader::check_file() {
  if (!h5::has_attribute(file_, "schema") || h5::read_string_attribute(file_, "schema") != kTraceSchemaName)
    fail("not a scaleprobe trace (no schema='{}' attribute)", kTraceSchemaName);
  version_ = h5::read_int_attribute(file_, "schema_version");
  if (version_ < kOldestTraceSchemaVersion || version_ > kTraceSchemaVersion)
    fail("unsupported trace schema version {} (this build reads versions {} to {})", version_,
         kOldestTraceSchemaVersion, kTraceSchemaVersion);
  if (version_ >= kFirstDigestTraceSchemaVersion && !digest_verified_)
    fail("corrupt: schema version {} requires a whole-file digest and the file has none", version_);
  if (!h5::has_attribute(file_, "complete") || h5::read_int_attribute(file_, "complete") != 1)
    fail("incomplete trace (the run did not finish writing it)");
  kind_ = h5::read_string_attribute(file_, "kind");
  nranks_ = h5::read_int_attribute(file_, "nranks");
  if (nranks_ < 1) fail("root attribute nranks is {}, expected at least 1", nranks_);
  if (!h5::exists(file_, "provenance")) fail("missing /provenance group");
  for (const std::string& name : h5::child_names(file_)) {
    if (name == "provenance") continue;
    h5::Group g = h5::open_group(file_, name);
    const std::int64_t rows = h5::read_int_attribute(g, "rows");
    if (rows < 0) fail("table '{}' has {} rows", name, rows);
    TraceTableInfo info{name, h5::read_string_attribute(g, "scope"), static_cast<std::size_t>(rows)};
    if (info.scope != "shared" && info.scope != "per_rank") fail("table '{}' has unknown scope '{}'", name, info.scope);
    for (const std::string& col : h5::child_names(g)) {
      const ColumnData c = open_column(g, name, col);
      if (c.rows != info.rows) fail("table '{}' column '{}' has {} rows, expected {}", name, col, c.rows, info.rows);
      // Since schema version 2 every column with data carries a checksum: one without was altered.
      if (version_ >= 2 && c.rows > 0 && !h5::has_checksum(c.ds))
        fail("table '{}' column '{}' has no checksum (schema version {} requires one)", name, col, version_);
    }
    if (info.scope == "per_rank" && info.rows > 0) {
      Table t = read_table_unchecked(name);
      for (std::int64_t r : column_values<std::int64_t>(t, name, "rank"))
        if (r < 0 || r >= nranks_) fail("table '{}' names rank {} of {}", name, r, nranks_);
    }
    tables_.push_back(info);
  }
}

std::string TraceReader::root_attribute(const std::string& name) const {
  try {
    if (!h5::has_attribute(file_, name)) return "";
    return h5::read_attribute_as_text(file_, name);
  } catch (const std::exception& e) {
    fail("{}: {}", path_.string(), one_line_message(e));
  }
}

std::string TraceReader::provenance(const std::string& key) const {
  try {
    h5::Group g = h5::open_group(file_, "provenance");
    return h5::has_attribute(g, key) ? h5::read_string_attribute(g, key) : "";
  } catch (const std::exception& e) {
    fail("{}: {}", path_.string(), one_line_message(e));
  }
}

Table TraceReader::read_table(const std::string& name) const {
  try {
    return read_table_unchecked(name);
  } catch (const std::exception& e) {
    const std::string p = path_.string();
    const std::string what = e.what();
    if (what.starts_with(p + ": ")) throw;
    fail("{}: {}", p, one_line_message(e));
  }
}

Table TraceReader::read_table_unchecked(const std::string& name) const {
  if (!h5::exists(file_, name)) fail("no table '{}'", name);
  h5::Group g = h5::open_group(file_, name);
  Table t;
  for (const std::string& col : h5::child_names(g)) {
    ColumnData c = open_column(g, name, col);
    const std::string what = fmt::format("table '{}' column '{}'", name, col);
    const std::size_t n = c.rows;
    // A damaged or crafted row count must be refused before anything is allocated (a sanitizer
    // aborts on an impossible allocation instead of throwing bad_alloc).
    const std::size_t bytes = checked_product(n, std::max<std::size_t>(c.elem_size, 8), what + " size");
    if (const std::uint64_t memory = physical_memory_bytes(); memory != 0 && bytes > memory)
      fail("out of memory: {} holds {} rows ({} bytes), more than this machine's memory (corrupt?)", what, n, bytes);
    std::string unit = h5::has_attribute(c.ds, "unit") ? h5::read_string_attribute(c.ds, "unit") : "";
    std::string desc = h5::has_attribute(c.ds, "description") ? h5::read_string_attribute(c.ds, "description") : "";
    switch (c.cls) {
      case H5T_INTEGER: {
        auto& v = t.ints(col, unit, desc);
        v.resize(n);
        if (n) h5::read_dataset_data(c.ds, H5T_NATIVE_INT64, v.data(), what);
        break;
      }
      case H5T_FLOAT: {
        auto& v = t.reals(col, unit, desc);
        v.resize(n);
        if (n) h5::read_dataset_data(c.ds, H5T_NATIVE_DOUBLE, v.data(), what);
        break;
      }
      default: {  // H5T_STRING, fixed length (open_column checked)
        const std::size_t len = c.elem_size;
        std::vector<char> buf(checked_product(n, len, what + " size"));
        h5::Datatype mem = h5::fixed_string_type(len);
        H5Tset_cset(mem, H5Tget_cset(c.type));
        if (n) h5::read_dataset_data(c.ds, mem, buf.data(), what);
        auto& v = t.strings(col, desc);
        v.reserve(n);
        for (std::size_t i = 0; i < n; ++i) v.emplace_back(buf.data() + i * len, strnlen(buf.data() + i * len, len));
        break;
      }
    }
  }
  return t;
}

std::size_t TraceReader::read_all_tables() const {
  std::size_t checked = 0;
  for (const TraceTableInfo& info : tables_) {
    h5::Group g = h5::open_group(file_, info.name);
    for (const std::string& col : h5::child_names(g))
      if (info.rows > 0 && h5::has_checksum(open_column(g, info.name, col).ds)) ++checked;
    read_table_unchecked(info.name);  // HDF5 verifies each chunk's Fletcher32 as it reads it
  }
  return checked;
}

std::size_t TraceReader::verify_checksums() const {
  try {
    return read_all_tables();
  } catch (const std::exception& e) {
    fail("{}: {}", path_.string(), one_line_message(e));
  }
}

}  // namespace sp
