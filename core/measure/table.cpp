#include "core/measure/table.hpp"

#include "core/run/error.hpp"

namespace sp {

std::size_t Column::size() const {
  return std::visit([](const auto& v) { return v.size(); }, values);
}

template <typename T>
std::vector<T>& Table::column(const std::string& name, const std::string& unit, const std::string& description) {
  for (Column& c : columns_) {
    if (c.name != name) continue;
    if (auto* v = std::get_if<std::vector<T>>(&c.values)) return *v;
    fail("table column '{}' reused with another type", name);
  }
  columns_.push_back(Column{name, unit, description, std::vector<T>{}});
  return std::get<std::vector<T>>(columns_.back().values);
}

std::vector<std::int64_t>& Table::ints(const std::string& n, const std::string& u, const std::string& d) {
  return column<std::int64_t>(n, u, d);
}
std::vector<double>& Table::reals(const std::string& n, const std::string& u, const std::string& d) {
  return column<double>(n, u, d);
}
std::vector<std::string>& Table::strings(const std::string& n, const std::string& d) {
  return column<std::string>(n, "", d);
}

const Column* Table::find(const std::string& name) const {
  for (const Column& c : columns_)
    if (c.name == name) return &c;
  return nullptr;
}

std::size_t Table::rows() const {
  if (columns_.empty()) return 0;
  std::size_t n = columns_.front().size();
  for (const Column& c : columns_)
    if (c.size() != n)
      fail("table column '{}' has {} rows but '{}' has {}", c.name, c.size(), columns_.front().name, n);
  return n;
}

}  // namespace sp
