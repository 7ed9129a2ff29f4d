#include "core/trace/json_report.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>

#include "core/run/error.hpp"
#include "core/run/program.hpp"

namespace sp {

namespace {

using nlohmann::ordered_json;

ordered_json key_values(const KeyValues& kv) {
  ordered_json o = ordered_json::object();
  for (const auto& [k, v] : kv) o[k] = v;
  return o;
}

// {"columns": {name: {"unit", "description"}}, "rows": [{name: value, ...}, ...]}; NaN and
// infinities become null (JSON has no such numbers).
ordered_json table_json(const Table& t) {
  ordered_json columns = ordered_json::object(), rows = ordered_json::array();
  const std::size_t n = t.rows();
  for (std::size_t i = 0; i < n; ++i) rows.push_back(ordered_json::object());
  for (const Column& c : t.columns()) {
    columns[c.name] = {{"unit", c.unit}, {"description", c.description}};
    std::visit(
        [&](const auto& values) {
          for (std::size_t i = 0; i < n; ++i) {
            using V = std::decay_t<decltype(values[i])>;
            if constexpr (std::is_same_v<V, double>)
              rows[i][c.name] = std::isfinite(values[i]) ? ordered_json(values[i]) : ordered_json(nullptr);
            else
              rows[i][c.name] = values[i];
          }
        },
        c.values);
  }
  return {{"columns", columns}, {"rows", rows}};
}

}  // namespace

void write_json_report(const std::filesystem::path& path, const std::string& kind, const Provenance& prov,
                       const std::filesystem::path& trace,
                       const std::vector<std::pair<std::string, const Table*>>& tables) {
  ordered_json doc;
  doc["schema"] = "scaleprobe-json";
  doc["schema_version"] = kJsonSchemaVersion;
  doc["kind"] = kind;
  doc["trace"] = trace.string();
  doc["provenance"] = {{"run", key_values(prov.run)}, {"slurm", key_values(prov.slurm)}, {"env", key_values(prov.env)}};
  ordered_json& out = doc["tables"] = ordered_json::object();
  for (const auto& [name, table] : tables) out[name] = table_json(*table);

  const std::filesystem::path partial = path.string() + ".partial";
  {
    std::ofstream f(partial);
    f << doc.dump(1) << '\n';
    f.close();
    if (!f) {
      const int saved_errno = errno;
      std::error_code ec;
      std::filesystem::remove(partial, ec);
      const std::string cause = file_system_cause(partial.string(), saved_errno);
      fail("cannot write {}{}", partial.string(), cause.empty() ? "" : ": " + cause);
    }
  }
  std::error_code ec;
  std::filesystem::rename(partial, path, ec);
  if (ec) {
    std::filesystem::remove(partial, ec);
    fail("cannot rename {} to {}: {}", partial.string(), path.string(), ec.message());
  }
}

}  // namespace sp
