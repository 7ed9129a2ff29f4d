// An HDF5 file built in memory (core/trace/h5_memory_file.hpp) is, once written out, the file libhdf5
// would have written itself: its user block is kept, its size is its end-of-file address (no
// driver padding), libhdf5 opens it and reads the data back, and a digest stamped in memory
// verifies on disk. A failure while the file is filled is an error, not a crash or a leak.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <vector>

#include "core/run/error.hpp"
#include "core/trace/file_digest.hpp"
#include "core/trace/h5.hpp"
#include "core/trace/h5_memory_file.hpp"

namespace fs = std::filesystem;

namespace {

sp::h5::PropertyList v18_access() {
  sp::h5::PropertyList fapl(H5Pcreate(H5P_FILE_ACCESS));
  H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18);
  return fapl;
}

void write_ints(hid_t file, const std::vector<int>& values) {
  hsize_t n = values.size();
  sp::h5::Dataspace space(H5Screate_simple(1, &n, nullptr));
  sp::h5::Dataset d(H5Dcreate2(file, "values", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  ASSERT_GE(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
}

fs::path write_out(std::span<const unsigned char> bytes, const char* name) {
  const fs::path path = fs::temp_directory_path() / name;
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  return path;
}

}  // namespace

TEST(H5MemoryFile, WrittenOutItOpensWithItsDataAndDigest) {
  sp::h5::quiet_errors();
  std::vector<int> values(300000);  // 1.2 MB: more than one of the driver's 1 MiB increments
  std::iota(values.begin(), values.end(), -7);
  sp::h5::PropertyList fcpl = sp::digest_file_creation();
  sp::h5::MemoryFile file = sp::h5::build_memory_file(fcpl, v18_access(), [&](hid_t f) { write_ints(f, values); });
  ASSERT_GT(file.size, sp::kDigestBlockBytes + values.size() * sizeof(int));
  EXPECT_LT(file.size, sp::kDigestBlockBytes + values.size() * sizeof(int) + 64 * 1024)
      << "the driver's padding past the end-of-file address was kept";
  sp::stamp_image_digest(file.bytes());
  const fs::path path = write_out(file.bytes(), "sp_h5_memory_file.h5");
  EXPECT_EQ(sp::verify_file_digest(path), sp::FileDigest::verified);

  sp::h5::File f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  ASSERT_GE(f.get(), 0) << "libhdf5 does not open the written-out file";
  sp::h5::Dataset d(H5Dopen2(f, "values", H5P_DEFAULT));
  std::vector<int> back(values.size());
  ASSERT_GE(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()), 0);
  EXPECT_EQ(back, values);
  d.reset();
  f.reset();
  fs::remove(path);
}

TEST(H5MemoryFile, AFailureWhileFillingIsAnError) {
  sp::h5::quiet_errors();
  sp::h5::PropertyList fcpl = sp::digest_file_creation();
  EXPECT_THROW(sp::h5::build_memory_file(fcpl, v18_access(), [](hid_t) { sp::fail("the writer gave up"); }), sp::Error);
  // Another file builds afterwards: the failed one was closed and its buffer released.
  sp::h5::MemoryFile file = sp::h5::build_memory_file(fcpl, v18_access(), [](hid_t f) { write_ints(f, {1, 2, 3}); });
  EXPECT_GT(file.size, sp::kDigestBlockBytes);
}

TEST(H5MemoryFile, AnOlderSuperblockIsRefused) {
  sp::h5::quiet_errors();
  sp::h5::PropertyList fapl(H5Pcreate(H5P_FILE_ACCESS));  // default bounds: superblock version 0
  sp::h5::PropertyList fcpl(H5Pcreate(H5P_FILE_CREATE));
  try {
    sp::h5::build_memory_file(fcpl, fapl, [](hid_t f) { write_ints(f, {1}); });
    FAIL() << "a version-0 superblock was accepted";
  } catch (const sp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("superblock is version 0"), std::string::npos) << e.what();
  }
}

// An empty image (a checkpoint killed before its first byte: checkpoint_interrupted.sh) is refused
// in one line without touching its (null) data pointer; UBSan flagged the memcpy before.
TEST(ImageDigest, AnEmptyImageIsRefusedInOneLine) {
  for (std::size_t n : {0, 2}) {
    const unsigned char bytes[2] = {'#', 's'};
    try {
      sp::verify_image_digest(std::span<const unsigned char>(n ? bytes : nullptr, n));
      FAIL() << n << " bytes were accepted";
    } catch (const sp::Error& e) {
      EXPECT_STREQ(e.what(), "not a readable HDF5 file (corrupt or truncated)") << n << " bytes";
    }
  }
}
