// A columnar table: what a trace stores per group (one HDF5 dataset per column), and what a
// benchmark fills before writing. Columns are int64, double or string, each with a unit.
#pragma once
#include <cstdint>
#include <string>
#include <deque>
#include <variant>
#include <vector>

namespace sp {

struct Column {
  using Values = std::variant<std::vector<std::int64_t>, std::vector<double>, std::vector<std::string>>;
  std::string name;
  std::string unit;         // "s", "us", "B", "GB/s", "" for counts and labels
  std::string description;  // one line, stored as an attribute for self-description
  Values values;
  std::size_t size() const;
};

class Table {
 public:
  // Get-or-create a column of the given type (a name reused with another type is an error).
  std::vector<std::int64_t>& ints(const std::string& name, const std::string& unit = "",
                                  const std::string& description = "");
  std::vector<double>& reals(const std::string& name, const std::string& unit = "",
                             const std::string& description = "");
  std::vector<std::string>& strings(const std::string& name, const std::string& description = "");

  // A deque, so references returned by ints()/reals()/strings() stay valid as columns are added.
  const std::deque<Column>& columns() const { return columns_; }
  std::deque<Column>& columns() { return columns_; }
  const Column* find(const std::string& name) const;
  // Number of rows; throws sp::Error if the columns disagree.
  std::size_t rows() const;

 private:
  template <typename T>
  std::vector<T>& column(const std::string& name, const std::string& unit, const std::string& description);
  std::deque<Column> columns_;
};

}  // namespace sp
