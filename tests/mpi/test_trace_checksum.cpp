// Checksummed traces through parallel HDF5: the whole-file digest (schema version 3) refuses one
// flipped byte anywhere, metadata included, and a truncated file, in one line naming the file,
// before libhdf5 opens it; an older trace without a digest still loads. Beneath the digest every
// column with data is chunked with Fletcher32 (schema version 2), chunks shared by several ranks'
// rows are written correctly, and a flipped byte in any chunk (under a re-stamped digest) is
// reported as corrupt, naming the file and the column.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "core/run/error.hpp"
#include "core/trace/file_digest.hpp"
#include "core/run/program.hpp"
#include "core/measure/provenance.hpp"
#include "core/trace/trace.hpp"
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

// Every rank writes the trace into a fresh shared directory; rank 0 runs check(dir, path) on it
// (serial reads of copies), then the directory goes.
void check_written_trace(const std::function<void(const std::string& dir, const std::string& path)>& check) {
  sp::Session s = world();
  const std::string dir = shared_dir();
  const std::string path = write_trace(dir);
  if (s.rank == 0) {
    check(dir, path);
    fs::remove_all(dir);
  }
  MPI_Barrier(s.comm);
}

// Offset in the file of chunk `index` of a chunked dataset (H5Dget_chunk_info, HDF5 >= 1.10.5).
std::pair<haddr_t, hsize_t> chunk_address(const std::string& path, const std::string& dataset, hsize_t index) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  hid_t space = H5Dget_space(d);
  hsize_t offset[1] = {0};
  unsigned mask = 0;
  haddr_t addr = HADDR_UNDEF;
  hsize_t size = 0;
  const herr_t rc = H5Dget_chunk_info(d, space, index, offset, &mask, &addr, &size);
  // HDF5's addresses start after the user block (the whole-file digest).
  hid_t fcpl = H5Fget_create_plist(f);
  hsize_t userblock = 0;
  H5Pget_userblock(fcpl, &userblock);
  H5Pclose(fcpl);
  if (rc >= 0 && addr != HADDR_UNDEF) addr += userblock;
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
    EXPECT_EQ(r.schema_version(), 3);
    EXPECT_TRUE(r.digest_verified());
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
  check_written_trace([](const std::string& dir, const std::string& path) {
    for (const char* column : {"value", "x", "label", "rank"}) {
      const std::string dataset = std::string("samples/") + column;
      for (hsize_t chunk : {hsize_t{0}, hsize_t{1}}) {
        auto [addr, size] = chunk_address(path, dataset, chunk);
        if (chunk > 0 && addr == HADDR_UNDEF) continue;  // a column of one chunk
        ASSERT_NE(addr, HADDR_UNDEF) << dataset << " is not chunked (no checksum)";
        const std::string bad = dir + "/bad.h5";
        fs::copy_file(path, bad, fs::copy_options::overwrite_existing);
        flip_bytes(bad, addr + size / 2);
        EXPECT_THROW(sp::TraceReader{bad}, sp::Error) << "the digest misses a flip in " << dataset;
        sp::stamp_file_digest(bad);  // past the digest, to the chunk's own checksum
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
  });
}

namespace {

// The one-line error TraceReader gives for path ("" when it accepts the file).
std::string refusal(const std::string& path) {
  try {
    sp::TraceReader r(path);
    r.verify_checksums();
  } catch (const sp::Error& e) {
    return e.what();
  }
  return "";
}

void flip_byte(const std::string& path, std::uintmax_t at) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(at));
  const char c = static_cast<char>(f.get() ^ 0x01);
  f.seekp(static_cast<std::streamoff>(at));
  f.put(c);
}

}  // namespace

TEST(TraceDigest, OneFlippedByteAnywhereIsCorrupt) {
  check_written_trace([](const std::string& dir, const std::string& path) {
    const std::string bad = dir + "/flip.h5";
    fs::copy_file(path, bad);
    const std::uintmax_t size = fs::file_size(bad);
    // The digest block, the superblock and first object headers, then ~200 spots over the file.
    std::vector<std::uintmax_t> offsets{0, 17, 100, 511, 512, 513, 520, 560, 700, 1000, 2000, 4000, size - 1};
    for (std::uintmax_t at = 8191; at < size; at += size / 200) offsets.push_back(at);
    for (std::uintmax_t at : offsets) {
      flip_byte(bad, at);
      const std::string msg = refusal(bad);
      EXPECT_EQ(msg.rfind(bad + ": ", 0), 0u) << "byte " << at << ": " << msg;
      EXPECT_NE(msg.find("corrupt"), std::string::npos) << "byte " << at << ": " << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      if (at >= sp::kDigestBlockBytes) {
        EXPECT_NE(msg.find("corrupt: whole-file crc32"), std::string::npos) << "byte " << at << ": " << msg;
      }
      flip_byte(bad, at);  // restore
    }
    EXPECT_EQ(refusal(bad), "");
  });
}

TEST(TraceDigest, TruncatedOrExtendedIsCorrupt) {
  check_written_trace([](const std::string& dir, const std::string& path) {
    const std::uintmax_t size = fs::file_size(path);
    for (std::uintmax_t keep : {std::uintmax_t{100}, std::uintmax_t{600}, size / 2, size - 1}) {
      const std::string cut = dir + "/cut.h5";
      fs::copy_file(path, cut, fs::copy_options::overwrite_existing);
      fs::resize_file(cut, keep);
      const std::string msg = refusal(cut);
      EXPECT_NE(msg.find(cut + ": corrupt: truncated"), std::string::npos) << keep << ": " << msg;
    }
    const std::string longer = dir + "/longer.h5";
    fs::copy_file(path, longer);
    fs::resize_file(longer, size + 8);
    EXPECT_NE(refusal(longer).find("corrupt: longer than written"), std::string::npos) << refusal(longer);
  });
}

TEST(TraceDigest, OlderTraceWithoutDigestStillLoads) {
  sp::Session s = world();
  if (s.rank == 0) {
    const fs::path old = fs::path(SCALEPROBE_SOURCE_DIR) / "tests/data/schema1-allreduce.h5";
    ASSERT_TRUE(fs::exists(old)) << old;
    EXPECT_EQ(sp::verify_file_digest(old), sp::FileDigest::absent);
    sp::TraceReader r(old);
    EXPECT_FALSE(r.digest_verified());
    EXPECT_EQ(r.schema_version(), 1);
    EXPECT_GT(r.read_table("samples").rows(), 0u);
  }
  MPI_Barrier(s.comm);
}
