// Machine-readable results beside the HDF5 trace (--json FILE on allreduce_perf, bucket_sweep, p2p_perf),
// for dashboards and ReFrame-style harnesses that should not parse the text table. The rows are
// the trace's summary table itself — the same Table the text table is printed from — at full
// precision, with each column's unit and description, and the run's provenance. Schema
// "scaleprobe-json", version 1: docs/trace-schema.md ("JSON output").
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/measure/provenance.hpp"
#include "core/measure/table.hpp"

namespace sp {

inline constexpr int kJsonSchemaVersion = 1;

// Writes path atomically (path.partial, then renamed; the partial file is removed on failure).
// kind: the trace's kind ("allreduce", "bucket_sweep"); tables: (name, table) in order.
void write_json_report(const std::filesystem::path& path, const std::string& kind, const Provenance& prov,
                       const std::filesystem::path& trace,
                       const std::vector<std::pair<std::string, const Table*>>& tables);

}  // namespace sp
