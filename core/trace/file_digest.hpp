// Whole-file digest of every HDF5 file scaleprobe writes (traces, checkpoints).
//
// libhdf5 1.10.8 can crash (SEGV, use-after-free) on damaged metadata, so a reader must know that
// a file is intact before libhdf5 opens it. Writers reserve an HDF5 user block of
// kDigestBlockBytes at creation (digest_file_creation); once the file is closed, and before it
// is renamed to its final name, stamp_file_digest writes into that block one text line
//     scaleprobe-digest 1 crc32 <payload bytes> <crc32 as 8 hex digits>\n
// padded with NUL bytes, the crc32 (zlib) covering every byte after the block. libhdf5 skips a
// user block, so h5py, h5dump and older readers still open the file.
//
// verify_file_digest reads only bytes: a file starting with the HDF5 signature (no user block)
// is of the older format, written before the digest existed, and is reported as such; one
// starting with the digest line must match it exactly; anything else is refused.
#pragma once
#include <hdf5.h>

#include <filesystem>
#include <span>

#include "core/trace/h5.hpp"

namespace sp {

inline constexpr hsize_t kDigestBlockBytes = 512;  // HDF5's smallest user block

// File creation properties that leave the digest block free at the start of the file.
h5::PropertyList digest_file_creation();

// Computes the digest of a closed file created with digest_file_creation and writes the block.
// Throws sp::Error naming the problem (not the file).
void stamp_file_digest(const std::filesystem::path& path);
// The same for a whole file held in memory (h5::build_memory_file).
void stamp_image_digest(std::span<unsigned char> image);

enum class FileDigest {
  verified,  // the digest line is intact and matches every byte after the block
  absent,    // no user block: the older format (before the digest), not verifiable
};

// Checks a file before libhdf5 may open it. Throws sp::Error "corrupt: ..." (the file's digest
// line is damaged, the file is truncated or longer than its digest covers, or the digest does not
// match), or "not a readable HDF5 file (corrupt or truncated)" when the file starts with neither
// a digest line nor the HDF5 signature. Callers add the file's name.
FileDigest verify_file_digest(const std::filesystem::path& path);
// The same check on a whole file's bytes already in memory (core/trace/h5_open.hpp reads a file once,
// verifies those bytes and hands the same bytes to libhdf5).
FileDigest verify_image_digest(std::span<const unsigned char> image);

}  // namespace sp
