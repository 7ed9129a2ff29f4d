// Structure-aware inputs for the HDF5 readers (trace reader, checkpoint loaders).
//
// libHDF5 itself is not instrumented, and every file is covered by a whole-file digest (and most
// metadata by HDF5's checksums), so byte-level mutation of a real file is refused by the digest
// check and does not reach the project's reading code. Besides raw file images (see
// write_h5_input), every HDF5 target therefore accepts a small program that builds a
// well-formed file through the HDF5 API: groups, attributes and datasets whose names, types,
// shapes and values are drawn from the reader's vocabulary -- including the shapes and types a
// reader does not expect (array-shaped attributes, a string "rank" column, a null dataspace).
//
// Program: a sequence of one-byte operations, each followed by its argument bytes (every byte is
// taken modulo the table it indexes; a program may end anywhere):
//   0 GROUP n        create group names[n] under the root; it becomes the current group
//   1 ATTR n t s v   attribute names[n] of type t, shape s, value v on the current object
//   2 DSET n t s v   dataset names[n] in the current group; it becomes the current object
//   3 ROOT           the root group becomes the current group and object
//   4 TENSORS p      every tensor of the vocabulary in the current group with its float32 shape;
//                    p > 0 perturbs the shape of tensor p-1 (drop, add or grow a dimension)
//   5 GROUP_OBJECT   the current group becomes the current object again
//   6 ATTR_RAW n t s b0..b7  like ATTR with the value taken from 8 raw bytes
//   7 DSET_RAW n t s b0..b7  like DSET with the value taken from 8 raw bytes
// Types t: int64, int32, uint8, float64, float32, fixed string, variable string, 1-byte string.
// Shapes s: scalar, [1], [2], [3], [2,2], null, [0], [17]. Integer values v index kInts and
// element i holds kInts[v] + i (so a "rank" column counts up); strings are strings[v].
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <hdf5.h>

#include "core/run/error.hpp"
#include "fuzz_util.hpp"

namespace sp::fuzz {

struct H5Vocabulary {
  std::vector<std::string> names;    // group, attribute and dataset names
  std::vector<std::string> strings;  // string values
  struct Tensor {
    std::string name;
    std::vector<hsize_t> dims;
  };
  std::vector<Tensor> tensors;
};

inline bool is_hdf5_image(const std::uint8_t* data, std::size_t size) {
  static const std::uint8_t kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  return size >= 8 && std::equal(kSignature, kSignature + 8, data);
}

// Writes the file that program describes to path (HDF5 calls that fail, e.g. a duplicate name,
// are skipped) with a valid whole-file digest (core/trace/file_digest.hpp), as scaleprobe writes files.
// Returns false if the file could not be created at all.
bool build_h5_file(const std::string& path, const std::uint8_t* program, std::size_t size, const H5Vocabulary& vocab);

// SCALEPROBE_FUZZ_RESTAMP=1 (README.md): file images reach libhdf5 whatever their digest says.
bool restamp_mode();

// Writes the input to path; returns false when there is nothing for the reader to read:
//  - an image starting with the digest block (the seeds: real files): as is, so the digest check
//    decides; in the restamp mode under a re-stamped, matching digest;
//  - an image of the older format (starting with the HDF5 signature, no digest): as is; the
//    readers read it in an isolated child (core/trace/h5_open.hpp), whose crashes are not findings;
//  - anything else: a program for build_h5_file.
bool write_h5_input(const std::string& path, const std::uint8_t* data, std::size_t size, const H5Vocabulary& vocab);

// A finding when a reader left HDF5 objects open after returning or throwing: a leaked file
// handle keeps the file's metadata cached, so the next H5Fopen of the same path sees stale state.
void check_no_open_hdf5_objects(const char* reader);

// The body of every HDF5 reader's target: the input becomes a file (a raw image or a built one),
// `read(path)` may refuse it with sp::Error and nothing else, and leaves no HDF5 object open.
template <typename Read>
int fuzz_hdf5_reader(const std::uint8_t* data, std::size_t size, const H5Vocabulary& vocab, const char* reader,
                     Read&& read) {
  static InputFile file(".h5");
  isolate_quietly();
  if (!write_h5_input(file.path(), data, size, vocab)) return 0;
  try {
    read(file.path());
  } catch (const sp::Error& e) {
    refused(e);
  }
  check_no_open_hdf5_objects(reader);
  return 0;
}

}  // namespace sp::fuzz
