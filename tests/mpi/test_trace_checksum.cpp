// Checksummed traces through parallel HDF5 (schema version 2): every column with data is chunked
// with Fletcher32, chunks shared by several ranks' rows are written correctly, the reader verifies
// them, and a flipped byte in any chunk is reported as corrupt, naming the file and the column.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/program.hpp"
#include "core/provenance.hpp"
#include "core/trace.hpp"
#include "tests/lib/mpi_trace_test.hpp"

namespace fs = std::filesystem;

namespace {

sp::Session world() { return sp::test::world_session("test_trace_checksum"); }
std::string shared_dir() { return sp::test::shared_temp_dir("sp_trace_ck"); }

// Rank r writes kRows * ((r + 1) % 3) rows (rank 2 none: an empty selection in the collective
// write): 2.4 MB per int column over 3 ranks, so its 1 MiB chunks straddle the ranks' rows.
constexpr std::int64_t kRows = 100000;
std::int64_t rows_of(int rank) { return kRows * ((rank + 1) % 3); }

std::string write_trace(const std::string& dir) {
  sp::Session s = world();
  const std::string path = dir + "/ck.h5";
  sp::TraceWriter w(s, path, "test", sp::collect_provenance(s));
  sp::Table t;
  auto& value = t.ints("value");
  auto& x = t.reals("x");
  auto& label = t.strings("label");
  for (std::int64_t i = 0; i < rows_of(s.rank); ++i) {
    value.push_back(1000000 * s.rank + i);
    x.push_back(0.5 * i);
    label.push_back(std::string(1 + i % 7, char('a' + s.rank)));
  }
  w.write_table("samples", t, sp::TableScope::per_rank, "rows");
  sp::Table empty;
  empty.ints("nothing");
  w.write_table("empty", empty, sp::TableScope::shared, "no rows");
  w.commit();
  MPI_Barrier(s.comm);
  return path;
}

// Address of chunk `index` of a chunked dataset (H5Dget_chunk_info, HDF5 >= 1.10.5).
std::pair<haddr_t, hsize_t> chunk_address(const std::string& path, const std::string& dataset, hsize_t index) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  hid_t space = H5Dget_space(d);
  hsize_t offset[1] = {0};
  unsigned mask = 0;
  haddr_t addr = HADDR_UNDEF;
  hsize_t size = 0;
  const herr_t rc = H5Dget_chunk_info(d, space, index, offset, &mask, &addr, &size);
  H5Sclose(space);
  H5Dclose(d);
  H5Fclose(f);
  return rc < 0 ? std::pair<haddr_t, hsize_t>{HADDR_UNDEF, 0} : std::pair{addr, size};
}

void flip_bytes(const std::string& path, haddr_t at) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  char b[4];
  f.seekg(static_cast<std::streamoff>(at));
  f.read(b, 4);
  for (char& c : b) c = static_cast<char>(c ^ 0x5A);
  f.seekp(static_cast<std::streamoff>(at));
  f.write(b, 4);
}

}  // namespace

TEST(TraceChecksum, ParallelWriteIsChecksummedAndReadsBack) {
  sp::Session s = world();
  const std::string dir = shared_dir();
  const std::string path = write_trace(dir);
  if (s.rank == 0) {
    sp::TraceReader r(path);
    EXPECT_EQ(r.schema_version(), 2);
    EXPECT_EQ(r.verify_checksums(), 4u);  // rank, value, x, label (not the empty table's column)
    const sp::Table t = r.read_table("samples");
    const auto& rank = sp::column_values<std::int64_t>(t, "samples", "rank");
    const auto& value = sp::column_values<std::int64_t>(t, "samples", "value");
    const auto& label = sp::column_values<std::string>(t, "samples", "label");
    std::size_t row = 0;
    for (int r2 = 0; r2 < s.size; ++r2) row += rows_of(r2);
    ASSERT_EQ(rank.size(), row);
    ASSERT_EQ(value.size(), row);
    row = 0;
    for (int r2 = 0; r2 < s.size; ++r2)
      for (std::int64_t i = 0; i < rows_of(r2); ++i, ++row) {
        ASSERT_EQ(rank[row], r2);
        ASSERT_EQ(value[row], 1000000 * r2 + i);
        ASSERT_EQ(label[row], std::string(1 + i % 7, char('a' + r2)));
      }
    EXPECT_THROW((void)sp::column_values<double>(t, "samples", "rank"), sp::Error);
    EXPECT_THROW((void)sp::column_values<double>(t, "samples", "absent"), sp::Error);
    fs::remove_all(dir);
  }
  MPI_Barrier(s.comm);
}

TEST(TraceChecksum, FlippedBytesInAnyChunkAreCorrupt) {
  sp::Session s = world();
  const std::string dir = shared_dir();
  const std::string path = write_trace(dir);
  if (s.rank == 0) {
    for (const char* column : {"value", "x", "label", "rank"}) {
      const std::string dataset = std::string("samples/") + column;
      for (hsize_t chunk : {hsize_t{0}, hsize_t{1}}) {
        auto [addr, size] = chunk_address(path, dataset, chunk);
        if (chunk > 0 && addr == HADDR_UNDEF) continue;  // a column of one chunk
        ASSERT_NE(addr, HADDR_UNDEF) << dataset << " is not chunked (no checksum)";
        const std::string bad = dir + "/bad.h5";
        fs::copy_file(path, bad, fs::copy_options::overwrite_existing);
        flip_bytes(bad, addr + size / 2);
        try {
          sp::TraceReader r(bad);
          r.verify_checksums();
          ADD_FAILURE() << "a flipped byte in " << dataset << " chunk " << chunk << " passed";
        } catch (const sp::Error& e) {
          const std::string msg = e.what();
          EXPECT_NE(msg.find("fails its Fletcher32 checksum (corrupt)"), std::string::npos) << msg;
          EXPECT_NE(msg.find(bad), std::string::npos) << msg;
          EXPECT_NE(msg.find(std::string("column '") + column + "'"), std::string::npos) << msg;
        }
      }
    }
    fs::remove_all(dir);
  }
  MPI_Barrier(s.comm);
}
