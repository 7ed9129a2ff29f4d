// scaleprobe trace files: one self-describing HDF5 file per run (schema: docs/trace-schema.md).
//
// TraceWriter writes through parallel HDF5: every rank writes its own rows of per-rank tables in
// one collective call, so no sample is funnelled through rank 0. The file is written under
// "<name>.partial" and renamed to its final name only by commit(), after the root attribute
// complete=1 is set; a run that dies leaves no file under the final name.
//
// TraceReader opens a finished trace serially and refuses anything that is not a complete trace
// of a schema version this build knows.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "h5.hpp"
#include "provenance.hpp"
#include "table.hpp"

namespace sp {

inline constexpr const char* kTraceSchemaName = "scaleprobe-trace";
inline constexpr std::int64_t kTraceSchemaVersion = 1;

struct Session;

enum class TableScope {
  shared,    // identical on every rank (a summary); rank 0's copy is written
  per_rank,  // each rank's own rows, concatenated in rank order; a "rank" column is prepended
};

class TraceWriter {
 public:
  // Collective. kind names what the trace holds: "allreduce", "bucket_sweep", "train", ...
  TraceWriter(const Session& session, std::filesystem::path final_path, std::string kind,
              const Provenance& provenance);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Collective; every rank passes a table with the same columns in the same order.
  void write_table(const std::string& name, const Table& table, TableScope scope,
                   const std::string& description);
  // Collective; every rank passes the same value.
  void set_attribute(const std::string& name, const std::string& value);
  void set_attribute(const std::string& name, std::int64_t value);
  void set_attribute(const std::string& name, double value);

  // Collective: marks the file complete, closes it and renames it to the final name.
  std::filesystem::path commit();
  const std::filesystem::path& final_path() const { return final_path_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::filesystem::path final_path_, partial_path_;
  h5::File file_;
  bool committed_ = false;
};

struct TraceTableInfo {
  std::string name;
  std::string scope;
  std::size_t rows = 0;
};

class TraceReader {
 public:
  // Throws sp::Error naming the file and the problem: missing, not HDF5 (corrupt or truncated),
  // not a scaleprobe trace, unknown schema version, incomplete, or inconsistent tables.
  explicit TraceReader(const std::filesystem::path& path);

  const std::string& kind() const { return kind_; }
  std::int64_t schema_version() const { return version_; }
  std::int64_t nranks() const { return nranks_; }
  const std::vector<TraceTableInfo>& tables() const { return tables_; }
  std::string root_attribute(const std::string& name) const;
  std::string provenance(const std::string& key) const;  // "" if absent
  Table read_table(const std::string& name) const;

 private:
  std::filesystem::path path_;
  h5::File file_;
  std::string kind_;
  std::int64_t version_ = 0, nranks_ = 0;
  std::vector<TraceTableInfo> tables_;
};

}  // namespace sp
