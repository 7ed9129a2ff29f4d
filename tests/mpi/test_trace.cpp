// Trace round trip through parallel HDF5 at several rank counts, and the reader's refusal of
// truncated, corrupt, wrong-version, incomplete and missing files.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>

#include <filesystem>
#include <fstream>

#include "core/run/error.hpp"
#include "core/trace/file_digest.hpp"
#include "core/run/program.hpp"
#include "core/measure/provenance.hpp"
#include "core/trace/trace.hpp"
#include "tests/lib/mpi_trace_test.hpp"

namespace fs = std::filesystem;

namespace {

sp::Session world() { return sp::test::world_session("test_trace", {"test_trace", "--flag"}); }
std::string shared_dir() { return sp::test::shared_temp_dir("sp_trace"); }

// Rank r contributes r rows (rank 0 none), with strings whose length depends on the rank.
sp::Table per_rank_rows(int rank) {
  sp::Table t;
  auto& iter = t.ints("iteration", "", "iteration");
  auto& wall = t.reals("wall_s", "s", "duration");
  auto& label = t.strings("label", "text");
  for (int i = 0; i < rank; ++i) {
    iter.push_back(100 * rank + i);
    wall.push_back(rank + i * 0.5);
    label.push_back(std::string(rank + i, 'a' + rank));
  }
  return t;
}

std::string write_sample_trace(const std::string& dir) {
  sp::Session s = world();
  sp::Provenance prov = sp::collect_provenance(s);
  std::string path = dir + "/sample.h5";
  sp::TraceWriter w(s, path, "test", prov);
  // While writing, only the .partial name exists.
  MPI_Barrier(s.comm);
  EXPECT_TRUE(fs::exists(path + ".partial"));
  EXPECT_FALSE(fs::exists(path));
  w.write_table("samples", per_rank_rows(s.rank), sp::TableScope::per_rank, "per-rank rows");
  sp::Table shared;
  shared.strings("algorithm", "name") = {"ring", "tree"};
  shared.reals("t_mean_us", "us", "mean") = {1.5, 2.5};
  // Other ranks pass different values: only rank 0's copy must be written.
  if (s.rank != 0) shared.reals("t_mean_us")[0] = -1;
  w.write_table("summary", shared, sp::TableScope::shared, "summary");
  w.set_attribute("answer", std::int64_t{42});
  EXPECT_EQ(w.commit(), fs::path(path));
  EXPECT_TRUE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".partial"));
  MPI_Barrier(s.comm);  // everyone has looked before rank 0 may go on and delete the directory
  return path;
}

void expect_refused(const std::string& path, const std::string& fragment) {
  try {
    sp::TraceReader r(path);
    ADD_FAILURE() << path << " was accepted; expected: " << fragment;
  } catch (const sp::Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
    EXPECT_NE(msg.find(path), std::string::npos) << "the message names the file: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
  }
}

void set_int_attribute(const std::string& path, const char* name, std::int64_t v) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  hid_t a = H5Aopen(f, name, H5P_DEFAULT);
  ASSERT_GE(a, 0);
  H5Awrite(a, H5T_NATIVE_INT64, &v);
  H5Aclose(a);
  H5Fclose(f);
  sp::stamp_file_digest(path);  // a file written with that value, not a corrupt one
}

}  // namespace

TEST(Trace, ParallelRoundTrip) {
  sp::Session s = world();
  std::string path = write_sample_trace(shared_dir());
  sp::TraceReader r(path);
  EXPECT_EQ(r.kind(), "test");
  EXPECT_EQ(r.nranks(), s.size);
  EXPECT_EQ(r.schema_version(), sp::kTraceSchemaVersion);
  EXPECT_EQ(r.root_attribute("answer"), "42");
  EXPECT_EQ(r.root_attribute("complete"), "1");
  EXPECT_EQ(r.provenance("command_line"), "test_trace --flag");
  EXPECT_EQ(r.provenance("nranks"), std::to_string(s.size));
  EXPECT_FALSE(r.provenance("git_revision").empty());
  EXPECT_FALSE(r.provenance("mpi_library_version").empty());

  sp::Table t = r.read_table("samples");
  std::size_t expected_rows = static_cast<std::size_t>(s.size) * (s.size - 1) / 2;
  ASSERT_EQ(t.rows(), expected_rows);
  const auto& rank = std::get<std::vector<std::int64_t>>(t.find("rank")->values);
  const auto& iter = std::get<std::vector<std::int64_t>>(t.find("iteration")->values);
  const auto& wall = std::get<std::vector<double>>(t.find("wall_s")->values);
  const auto& label = std::get<std::vector<std::string>>(t.find("label")->values);
  EXPECT_EQ(t.find("wall_s")->unit, "s");
  std::size_t row = 0;
  for (int r2 = 0; r2 < s.size; ++r2) {
    for (int i = 0; i < r2; ++i, ++row) {  // concatenated in rank order
      EXPECT_EQ(rank[row], r2);
      EXPECT_EQ(iter[row], 100 * r2 + i);
      EXPECT_EQ(wall[row], r2 + i * 0.5);
      EXPECT_EQ(label[row], std::string(r2 + i, 'a' + r2));
    }
  }
  sp::Table summary = r.read_table("summary");
  ASSERT_EQ(summary.rows(), 2u);
  EXPECT_EQ(std::get<std::vector<double>>(summary.find("t_mean_us")->values)[0], 1.5);
  EXPECT_EQ(std::get<std::vector<std::string>>(summary.find("algorithm")->values)[1], "tree");
}

TEST(Trace, ReaderRefusesBrokenFiles) {
  sp::Session s = world();
  std::string dir = shared_dir();
  std::string good = write_sample_trace(dir);
  if (s.rank != 0) return;  // serial checks on copies

  expect_refused(dir + "/missing.h5", "not found");

  std::string partial = dir + "/copy.h5.partial";
  fs::copy_file(good, partial);
  expect_refused(partial, "incomplete");

  std::string truncated = dir + "/truncated.h5";
  fs::copy_file(good, truncated);
  fs::resize_file(truncated, fs::file_size(good) / 2);
  expect_refused(truncated, "corrupt: truncated");

  std::string garbage = dir + "/garbage.h5";
  {
    std::ofstream out(garbage, std::ios::binary);
    for (int i = 0; i < 4096; ++i) out.put(static_cast<char>((i * 131) % 251));
  }
  expect_refused(garbage, "not a readable HDF5 file");

  std::string version = dir + "/version.h5";
  fs::copy_file(good, version);
  set_int_attribute(version, "schema_version", 99);
  expect_refused(version, "unsupported trace schema version 99");

  std::string incomplete = dir + "/incomplete.h5";
  fs::copy_file(good, incomplete);
  set_int_attribute(incomplete, "complete", 0);
  expect_refused(incomplete, "incomplete trace");

  // A plain HDF5 file that is not a scaleprobe trace.
  std::string foreign = dir + "/foreign.h5";
  H5Fclose(H5Fcreate(foreign.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  expect_refused(foreign, "not a scaleprobe trace");

  fs::remove_all(dir);
}
