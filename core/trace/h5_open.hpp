// The one way scaleprobe opens an HDF5 file for reading (traces, checkpoints).
//
// libhdf5 1.10.8 can crash (SEGV, abort in free), hang or allocate without bound on damaged
// metadata. So a file is read into memory once, and:
//  - a file with the whole-file digest (core/trace/file_digest.hpp) is verified on those bytes and the
//    same bytes are opened as a file image (core driver): the data read is the data verified, and
//    a damaged digest line or a mismatch is refused before libhdf5 sees a byte;
//  - a file without a digest (an older trace or checkpoint, a foreign .h5) is first read in a
//    child process (fork, before libhdf5 touches the file in this process) under a wall-time and
//    a memory limit. The child opens the bytes, runs the caller's full read (every object the
//    caller will use), then re-writes what it read into a new in-memory file stamped with a
//    digest and sends those bytes back; this process verifies and opens that image. A crash,
//    hang or runaway allocation in the child is one error ("unreadable: the HDF5 library crashed
//    on it (signal 11)") and the caller goes on. The child never calls MPI and leaves with _exit,
//    so it is safe inside an MPI program.
// Nothing outside core/trace/h5_open.cpp calls H5Fopen to read a file (tests/unit/h5fopen_only_here.sh).
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <vector>

#include "core/trace/h5.hpp"

namespace sp {

struct IsolationLimits {
  unsigned seconds = 120;          // wall time of the isolated read
  std::uint64_t memory_bytes = 0;  // address space the child may add; 0: half of physical memory
};

// Process-wide settings of the isolated reads (set once, at start; not thread-safe). child_start
// runs first in the child: the fuzz targets silence the sanitizers' and libFuzzer's crash
// reporting there, so that a crash in the child is only the child's signal.
struct IsolationSettings {
  IsolationLimits limits;
  void (*child_start)() = nullptr;
};
void configure_isolated_reads(const IsolationSettings& settings);

struct OpenedH5 {
  h5::File file;
  bool digest_verified = false;  // false: the file has no digest and was read in isolation
};

// Runs on the opened file in the isolated child; throws sp::Error on anything it refuses (the
// message comes back as the error). It must touch everything the caller reads afterwards.
using FullRead = std::function<void(hid_t file)>;

// Opens path for reading as above. Throws sp::Error naming the problem (not the file): cannot
// read it, corrupt (digest), not HDF5, the full read's own error, or "unreadable: ..." when the
// isolated read crashed, ran out of time or memory. Callers add the file's name.
OpenedH5 open_h5_for_reading(const std::filesystem::path& path, const FullRead& full_read);

// The whole file's bytes (one read).
std::vector<unsigned char> read_whole_file(const std::filesystem::path& path);
// Opens bytes as a read-only file image (a user block before the superblock is allowed). Only for
// bytes that were verified or that libhdf5 wrote: libhdf5 is not protected here.
h5::File open_h5_image(std::span<const unsigned char> bytes);
// A copy of an open file (root attributes, every object below the root) written by libhdf5 into
// memory with a digest block, stamped: what the isolated read sends back.
std::vector<unsigned char> rewrite_digested_image(hid_t file);

// Reads an undigested file in this process, unprotected: only for tests comparing the isolated
// read with an in-process one.
h5::File open_h5_in_process_for_tests(const std::filesystem::path& path);

}  // namespace sp
