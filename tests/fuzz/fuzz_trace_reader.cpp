// Fuzz target: the trace reader (core/trace/trace_reader.cpp, TraceReader) as trace_check and the
// analysis use it: open, list the tables, read every table, read root attributes and provenance.
//
// Input: a raw HDF5 file image (seeds: real traces written by allreduce_perf, bucket_sweep and the
// trainers; an older-format one without the digest, which the reader reads in an isolated child,
// where libhdf5's crashes are expected and not findings) or an h5_builder program (see
// h5_builder.hpp) over the trace schema's vocabulary.
// Besides "sp::Error or success": every table the reader lists reads back with the row count
// it announced.
#include "core/run/error.hpp"
#include "core/trace/trace.hpp"
#include "fuzz_util.hpp"
#include "h5_builder.hpp"

namespace {

const sp::fuzz::H5Vocabulary& vocabulary() {
  static const sp::fuzz::H5Vocabulary v{
      {"schema", "schema_version", "complete", "kind", "nranks", "provenance", "scope", "rows", "rank", "unit",
       "description", "cases", "samples", "time_us", "algorithm", "program", "env", "slurm", "interrupted_by_signal"},
      {"scaleprobe-trace", "per_rank", "shared", "allreduce", "us", "", "train", "x"},
      {}};
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return sp::fuzz::fuzz_hdf5_reader(data, size, vocabulary(), "TraceReader", [](const std::string& path) {
    const sp::TraceReader r(path);
    for (const sp::TraceTableInfo& info : r.tables()) {
      const sp::Table t = r.read_table(info.name);
      if (!t.columns().empty() && t.rows() != info.rows)
        sp::fuzz::finding(fmt::format("table '{}' read {} rows, listed with {}", info.name, t.rows(), info.rows));
    }
    for (const char* name : {"kind", "nranks", "schema_version", "complete", "interrupted_by_signal", "rows"})
      r.root_attribute(name);
    r.provenance("program");
  });
}
