// scaleprobe trace files: one self-describing HDF5 file per run (schema: docs/trace-schema.md).
//
// TraceWriter writes through parallel HDF5: every rank writes its own rows of per-rank tables in
// one collective call, so no sample is funnelled through rank 0. The file is written under
// "<name>.partial" and renamed to its final name only by commit(), after the root attribute
// complete=1 is set; a run that dies leaves no file under the final name.
//
// TraceReader opens a finished trace serially and refuses anything that is not a complete trace
// of a schema version this build knows, and every malformed or corrupt part as an sp::Error
// naming the file (never another exception: a crafted file cannot crash a reader).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/trace/h5.hpp"
#include "core/measure/provenance.hpp"
#include "core/measure/table.hpp"

namespace sp {

inline constexpr const char* kTraceSchemaName = "scaleprobe-trace";
// Version 2 adds a Fletcher32 checksum to every table column with data; version 3 a whole-file
// crc32 in the HDF5 user block (core/trace/file_digest.hpp), checked before libhdf5 opens the file.
// Versions 1 and 2 (no digest; version 1 no checksums either) are still read.
inline constexpr std::int64_t kTraceSchemaVersion = 3;
inline constexpr std::int64_t kFirstDigestTraceSchemaVersion = 3;
inline constexpr std::int64_t kOldestTraceSchemaVersion = 1;

struct Session;

// The trace path of a run: `given` (the -o value) when set, else
// $SCALEPROBE_TRACE_DIR (default traces)/<program>-<UTC start time>[-job<SLURM id>].h5, built from
// provenance so every rank names the same file.
std::string trace_output_path(const std::string& given, const Provenance& prov);

enum class TableScope {
  shared,    // identical on every rank (a summary); rank 0's copy is written
  per_rank,  // each rank's own rows, concatenated in rank order; a "rank" column is prepended
};

class TraceWriter {
 public:
  // Collective. kind names what the trace holds: "allreduce", "bucket_sweep", "train", ...
  TraceWriter(const Session& session, std::filesystem::path final_path, std::string kind, const Provenance& provenance);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Collective; every rank passes a table with the same columns in the same order.
  void write_table(const std::string& name, const Table& table, TableScope scope, const std::string& description);
  // Collective; every rank passes the same value.
  void set_attribute(const std::string& name, const std::string& value);
  void set_attribute(const std::string& name, std::int64_t value);
  void set_attribute(const std::string& name, double value);

  // Collective: marks the file complete, closes it and renames it to the final name.
  std::filesystem::path commit();
  const std::filesystem::path& final_path() const { return final_path_; }

 private:
  void write_table_rows(const std::string& name, const Table& table, TableScope scope, const std::string& description);
  [[noreturn]] void fail_write(const std::exception& e) const;

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

// The values of a column of type T (std::int64_t, double or std::string); throws sp::Error
// "table '<table>' has no '<column>' column" or "... is <type>, expected <type>".
template <typename T>
const std::vector<T>& column_values(const Table& table, const std::string& table_name, const std::string& column);

class TraceReader {
 public:
  // Opens the file through the verified open (core/trace/h5_open.hpp: the digest checked on the bytes
  // libhdf5 then reads; a file without one read and checked whole in an isolated child first).
  // Throws sp::Error naming the file and the problem: missing, its whole-file digest damaged or
  // not matching (corrupt or truncated; checked before libhdf5 reads it), unreadable (libhdf5
  // crashed, hung or ran out of memory in the isolated read), not HDF5, not a scaleprobe trace, unknown schema version,
  // incomplete, or inconsistent tables.
  explicit TraceReader(const std::filesystem::path& path);

  const std::string& kind() const { return kind_; }
  std::int64_t schema_version() const { return version_; }
  // Whether the whole-file digest was verified (false: an older trace, written without one).
  bool digest_verified() const { return digest_verified_; }
  std::int64_t nranks() const { return nranks_; }
  const std::vector<TraceTableInfo>& tables() const { return tables_; }
  std::string root_attribute(const std::string& name) const;
  std::string provenance(const std::string& key) const;  // "" if absent
  // Every column of a table; throws sp::Error (naming the file) if a column is not 1-D, of an
  // unsupported type, or fails its checksum.
  Table read_table(const std::string& name) const;
  // Reads every column of every table, which makes HDF5 verify each checksummed chunk. Returns
  // how many columns carry a checksum (0 for a version-1 trace); throws sp::Error "... fails its
  // Fletcher32 checksum (corrupt)" naming the file and column.
  std::size_t verify_checksums() const;

 private:
  TraceReader() = default;              // the isolated read's own reader (trace_reader.cpp)
  void check_file();                    // the schema, attributes and tables of file_
  std::size_t read_all_tables() const;  // verify_checksums without the file's name
  Table read_table_unchecked(const std::string& name) const;

  std::filesystem::path path_;
  h5::File file_;
  std::string kind_;
  std::int64_t version_ = 0, nranks_ = 0;
  bool digest_verified_ = false;
  std::vector<TraceTableInfo> tables_;
};

}  // namespace sp
