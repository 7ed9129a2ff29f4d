// A benchmark's output columns, each declared once with how a row's value is read: the summary
// table's (trace and JSON: name, unit, description) and the printed table's (header, width). The
// printed header and every printed row come from the same declarations, so their widths cannot
// drift apart, and the table's columns are created in declaration order.
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "core/measure/table.hpp"

namespace sp {

using CellValue = std::variant<std::int64_t, double, std::string>;

template <typename Row>
struct TableColumn {
  std::string name, unit, description;
  std::function<CellValue(const Row&)> value;  // its alternative is the column's type
};

template <typename Row>
struct PrintedColumn {
  std::string header;
  int width = 0;  // right-aligned; a wider text widens its row only
  std::function<std::string(const Row&)> text;
};

// Printed cells: fixed-point with `decimals` digits.
inline std::string fixed(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

template <typename Row>
struct Columns {
  std::vector<TableColumn<Row>> table;
  std::vector<PrintedColumn<Row>> printed;

  // The table's row for r (Table::rows() stays consistent: every column gets one value).
  void append(Table& t, const Row& r) const {
    for (const TableColumn<Row>& c : table) {
      CellValue v = c.value(r);
      if (auto* i = std::get_if<std::int64_t>(&v))
        t.ints(c.name, c.unit, c.description).push_back(*i);
      else if (auto* d = std::get_if<double>(&v))
        t.reals(c.name, c.unit, c.description).push_back(*d);
      else
        t.strings(c.name, c.description).push_back(std::get<std::string>(v));
    }
  }
  // '#' then the headers; a row: ' ' then its cells, each right-aligned to its column's width.
  std::string header_line() const {
    return line('#', [](const PrintedColumn<Row>& c) { return c.header; });
  }
  std::string row_line(const Row& r) const {
    return line(' ', [&](const PrintedColumn<Row>& c) { return c.text(r); });
  }

 private:
  template <typename Text>
  std::string line(char lead, Text text) const {
    std::string s(1, lead);
    for (std::size_t i = 0; i < printed.size(); ++i)
      s += fmt::format("{}{:>{}}", i ? " " : "", text(printed[i]), printed[i].width);
    return s + "\n";
  }
};

}  // namespace sp
