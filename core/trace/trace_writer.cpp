#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "core/run/error.hpp"
#include "core/trace/file_digest.hpp"
#include "core/run/log.hpp"
#include "core/run/program.hpp"
#include "core/trace/trace.hpp"

namespace sp {

std::string trace_output_path(const std::string& given, const Provenance& prov) {
  if (!given.empty()) return given;
  std::string stamp = *prov.find("start_time_utc");
  stamp.erase(std::remove(stamp.begin(), stamp.end(), ':'), stamp.end());
  std::string name = *prov.find("program") + "-" + stamp;
  for (auto& [k, v] : prov.slurm)
    if (k == "SLURM_JOB_ID") name += "-job" + v;
  const char* dir = std::getenv("SCALEPROBE_TRACE_DIR");
  return std::string(dir && *dir ? dir : "traces") + "/" + name + ".h5";
}

namespace {

#if defined(SCALEPROBE_SIMULATED)
// Under SimGrid's SMPI the trace is written with the serial HDF5 (a parallel one links a real MPI
// beside SMPI's): every rank's rows are gathered to rank 0, which alone holds the file. Same
// file, same schema; the root attribute simulated = 1 says what made it.
constexpr bool kGatheredWrite = true;
#else
constexpr bool kGatheredWrite = false;
#endif

// Whether this rank holds the file: every rank in the parallel write, rank 0 in the gathered one.
bool holds_file(int rank) { return !kGatheredWrite || rank == 0; }

// The gathered write: every rank's bytes, in rank order, on rank 0 (empty elsewhere). Sends in
// rank order, not MPI_Gatherv: SMPI's waits on its p requests at once, minutes at 1024 ranks.
[[maybe_unused]] std::vector<unsigned char> gather_to_root(MPI_Comm comm, int rank, const void* data,
                                                           std::size_t bytes) {
  int size = 1;
  SP_MPI_CHECK(MPI_Comm_size(comm, &size));
  const int mine = static_cast<int>(bytes);
  std::vector<int> counts(rank == 0 ? size : 0);
  SP_MPI_CHECK(MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm));
  constexpr int kTag = 0x7ace;
  if (rank != 0) {
    if (mine > 0) SP_MPI_CHECK(MPI_Send(data, mine, MPI_BYTE, 0, kTag, comm));
    return {};
  }
  std::size_t total = 0;
  for (int c : counts) total += static_cast<std::size_t>(c);
  std::vector<unsigned char> all(std::max<std::size_t>(total, 1));
  if (mine > 0) std::memcpy(all.data(), data, bytes);
  std::size_t at = static_cast<std::size_t>(mine);
  for (int r = 1; r < size; at += static_cast<std::size_t>(counts[r]), ++r)
    if (counts[r] > 0) SP_MPI_CHECK(MPI_Recv(all.data() + at, counts[r], MPI_BYTE, r, kTag, comm, MPI_STATUS_IGNORE));
  return all;
}

// Rows [offset, offset+count) of a 1-D dataset of total rows, written collectively (parallel
// HDF5); in the gathered write, rank 0 alone writes every rank's rows.
void write_rows(MPI_Comm comm, int rank, hid_t group, const std::string& name, hid_t mem_type, hid_t file_type,
                const void* data, hsize_t offset, hsize_t count, hsize_t total) {
  std::vector<unsigned char> gathered;
  if constexpr (kGatheredWrite) {
    gathered = gather_to_root(comm, rank, data, count * H5Tget_size(mem_type));
    if (rank != 0) return;
    data = gathered.data(), offset = 0, count = total;
  }
  h5::Dataspace file_space(h5::check(H5Screate_simple(1, &total, nullptr), "H5Screate_simple"));
  // Chunked with a Fletcher32 checksum per chunk (schema version 2); parallel HDF5 (>= 1.10.2)
  // writes filtered datasets collectively, which is how every column is written.
  h5::PropertyList dcpl = h5::checksummed_layout({total}, H5Tget_size(file_type));
  h5::Dataset ds(h5::check(H5Dcreate2(group, name.c_str(), file_type, file_space, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                           ("create dataset " + name).c_str()));
  if (total == 0) return;  // an empty table: nothing to write (every rank agrees)
  hsize_t mem_rows = std::max<hsize_t>(count, 1);
  h5::Dataspace mem_space(h5::check(H5Screate_simple(1, &mem_rows, nullptr), "H5Screate_simple"));
  if (count > 0) {
    h5::check_status(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &offset, nullptr, &count, nullptr), "select");
  } else {
    H5Sselect_none(file_space);
    H5Sselect_none(mem_space);
  }
  h5::PropertyList xfer(h5::check(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate"));
#if !defined(SCALEPROBE_SIMULATED)
  h5::check_status(H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
#endif
  static const std::int64_t dummy = 0;
  h5::check_status(H5Dwrite(ds, mem_type, mem_space, file_space, xfer, data ? data : &dummy),
                   ("write dataset " + name).c_str());
}

}  // namespace

TraceWriter::TraceWriter(const Session& session, std::filesystem::path final_path, std::string kind,
                         const Provenance& prov)
    : comm_(session.comm), rank_(session.rank), size_(session.size), final_path_(std::move(final_path)) {
  h5::quiet_errors();
  partial_path_ = final_path_;
  partial_path_ += ".partial";
  // Rank 0 creates the directory; everyone learns whether that worked.
  int ok = 1;
  std::string why;
  if (rank_ == 0 && final_path_.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(final_path_.parent_path(), ec);
    if (ec) {
      ok = 0;
      why = fmt::format("cannot create trace directory '{}': {}", final_path_.parent_path().string(), ec.message());
    }
  }
  // A directory where the trace goes would be found only at commit(), after the whole run.
  std::error_code not_there;
  if (rank_ == 0 && ok && std::filesystem::is_directory(final_path_, not_there)) {
    ok = 0;
    why = fmt::format("cannot write trace '{}': it is a directory", final_path_.string());
  }
  SP_MPI_CHECK(MPI_Bcast(&ok, 1, MPI_INT, 0, comm_));
  if (!ok) throw CollectiveError(why);

  h5::PropertyList fapl(h5::check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"));
#if !defined(SCALEPROBE_SIMULATED)
  h5::check_status(H5Pset_fapl_mpio(fapl, comm_, MPI_INFO_NULL), "H5Pset_fapl_mpio");
#endif
  // The HDF5 1.8 file format: its object headers, heaps and B-trees carry checksums, so damaged
  // metadata is refused by the library instead of crashing it (as fuzzing showed with the
  // earliest format); the column data carry Fletcher32 (write_rows).
  h5::check_status(H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18), "H5Pset_libver_bounds");
  // The user block that commit() fills with the whole-file digest (schema version 3).
  h5::PropertyList fcpl = digest_file_creation();
  // Opening is collective: it fails on every rank or on none.
  hid_t f = holds_file(rank_) ? H5Fcreate(partial_path_.c_str(), H5F_ACC_TRUNC, fcpl, fapl) : H5I_INVALID_HID;
  int created = !holds_file(rank_) || f >= 0;
  if constexpr (kGatheredWrite) SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &created, 1, MPI_INT, MPI_MIN, comm_));
  if (!created) throw CollectiveError(fmt::format("cannot create trace file '{}'", partial_path_.string()));
  if (!holds_file(rank_)) return;  // the gathered write: rank 0 alone writes attributes, provenance and tables
  file_ = h5::File(f);

  h5::write_attribute(file_, "schema", std::string(kTraceSchemaName));
  h5::write_attribute(file_, "schema_version", kTraceSchemaVersion);
  h5::write_attribute(file_, "kind", kind);
  h5::write_attribute(file_, "complete", std::int64_t{0});
  h5::write_attribute(file_, "simulated", std::int64_t{kGatheredWrite ? 1 : 0});
  h5::write_attribute(file_, "nranks", std::int64_t{size_});
  const std::string* host = prov.find("hostname");
  h5::write_attribute(file_, "machine", (host ? *host : std::string("?")) + " (" + cpu_model() + ")");
  const std::string* program = prov.find("program");
  h5::write_attribute(file_, "program", program ? *program : std::string("?"));

  h5::Group g = h5::create_group(file_, "provenance");
  for (auto& [k, v] : prov.run) h5::write_attribute(g, k, v);
  h5::Group slurm = h5::create_group(g, "slurm");
  for (auto& [k, v] : prov.slurm) h5::write_attribute(slurm, k, v);
  h5::Group env = h5::create_group(g, "env");
  for (auto& [k, v] : prov.env) h5::write_attribute(env, k, v);
}

TraceWriter::~TraceWriter() {
  // Not committed means an error is unwinding and the job is about to abort. Closing is
  // collective in parallel HDF5 and other ranks may never join, so the handle is abandoned;
  // the .partial file stays behind and readers refuse it.
  if (!committed_) file_.release();
}

void TraceWriter::write_table(const std::string& name, const Table& table, TableScope scope,
                              const std::string& description) {
  try {
    write_table_rows(name, table, scope, description);
  } catch (const CollectiveError&) {
    throw;
  } catch (const std::exception& e) {
    fail_write(e);
  }
}

// A failed write names the trace and, where the file system tells, the cause (HDF5 does not).
void TraceWriter::fail_write(const std::exception& e) const {
  const int saved_errno = errno;
  const std::string cause = file_system_cause(partial_path_.string(), saved_errno);
  fail("cannot write trace '{}': {}{}", partial_path_.string(), one_line_message(e),
       cause.empty() ? "" : " (" + cause + ")");
}

void TraceWriter::write_table_rows(const std::string& name, const Table& table, TableScope scope,
                                   const std::string& description) {
  std::size_t local_rows = table.rows();
  if (scope == TableScope::shared && rank_ != 0) local_rows = 0;
  // Every rank's row count, then this rank's offset and the total. An all-gather rather than
  // MPI_Exscan + MPI_Allreduce: SMPI's MPI_Exscan sends p^2/2 messages (minutes of simulation at
  // 256 ranks), its all-gather follows Open MPI's selection.
  unsigned long long mine = local_rows, offset = 0, total = 0;
  std::vector<unsigned long long> rows_of(static_cast<std::size_t>(size_));
  SP_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, rows_of.data(), 1, MPI_UNSIGNED_LONG_LONG, comm_));
  for (int r = 0; r < size_; ++r) (r < rank_ ? offset : total) += rows_of[static_cast<std::size_t>(r)];
  total += offset;

  h5::Group g;
  if (holds_file(rank_)) {
    g = h5::create_group(file_, name);
    h5::write_attribute(g, "rows", static_cast<std::int64_t>(total));
    h5::write_attribute(g, "scope", std::string(scope == TableScope::shared ? "shared" : "per_rank"));
    h5::write_attribute(g, "description", description);
  }

  auto finish_column = [&](const std::string& col, const std::string& unit, const std::string& desc) {
    if (!holds_file(rank_)) return;
    h5::Dataset ds(h5::check(H5Dopen2(g, col.c_str(), H5P_DEFAULT), "H5Dopen2"));
    h5::write_attribute(ds, "unit", unit);
    h5::write_attribute(ds, "description", desc);
  };

  if (scope == TableScope::per_rank) {
    std::vector<std::int64_t> rank_col(local_rows, rank_);
    write_rows(comm_, rank_, g, "rank", H5T_NATIVE_INT64, H5T_STD_I64LE, rank_col.data(), offset, mine, total);
    finish_column("rank", "", "MPI rank (in MPI_COMM_WORLD) that recorded the row");
  }
  for (const Column& c : table.columns()) {
    if (const auto* v = std::get_if<std::vector<std::int64_t>>(&c.values)) {
      write_rows(comm_, rank_, g, c.name, H5T_NATIVE_INT64, H5T_STD_I64LE, v->data(), offset, mine, total);
    } else if (const auto* v = std::get_if<std::vector<double>>(&c.values)) {
      write_rows(comm_, rank_, g, c.name, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, v->data(), offset, mine, total);
    } else {
      const auto& s = std::get<std::vector<std::string>>(c.values);
      unsigned long long len = 1;
      for (std::size_t i = 0; i < local_rows; ++i) len = std::max<unsigned long long>(len, s[i].size());
      SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &len, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm_));
      std::vector<char> packed(local_rows * len, '\0');
      for (std::size_t i = 0; i < local_rows; ++i) std::memcpy(packed.data() + i * len, s[i].data(), s[i].size());
      h5::Datatype t = h5::fixed_string_type(len);
      write_rows(comm_, rank_, g, c.name, t, t, packed.data(), offset, mine, total);
    }
    finish_column(c.name, c.unit, c.description);
  }
}

void TraceWriter::set_attribute(const std::string& name, const std::string& value) {
  if (holds_file(rank_)) h5::write_attribute(file_, name, value);
}
void TraceWriter::set_attribute(const std::string& name, std::int64_t value) {
  if (holds_file(rank_)) h5::write_attribute(file_, name, value);
}
void TraceWriter::set_attribute(const std::string& name, double value) {
  if (holds_file(rank_)) h5::write_attribute(file_, name, value);
}

std::filesystem::path TraceWriter::commit() {
  if (holds_file(rank_)) {
    h5::write_attribute(file_, "load_average_end", load_average());
    h5::write_attribute(file_, "finished_utc", utc_timestamp());
    try {
      h5::write_attribute(file_, "complete", std::int64_t{1});
      file_.close("close trace file");
    } catch (const std::exception& e) {
      fail_write(e);
    }
  }
  SP_MPI_CHECK(MPI_Barrier(comm_));
  int ok = 1;
  std::string why;
  if (rank_ == 0) {
    // The digest covers the closed file and is written before the rename: a file under the
    // final name always carries it.
    try {
      stamp_file_digest(partial_path_);
      std::error_code ec;
      std::filesystem::rename(partial_path_, final_path_, ec);
      if (ec) ok = 0, why = fmt::format("cannot rename it to '{}': {}", final_path_.string(), ec.message());
    } catch (const std::exception& e) {
      ok = 0, why = one_line_message(e);
    }
  }
  SP_MPI_CHECK(MPI_Bcast(&ok, 1, MPI_INT, 0, comm_));
  if (!ok) throw CollectiveError(fmt::format("cannot finish trace '{}': {}", partial_path_.string(), why));
  committed_ = true;
  return final_path_;
}

}  // namespace sp
