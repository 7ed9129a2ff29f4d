// An HDF5 file built in memory (the core driver, no backing store) and handed over as the bytes
// of the closed file, for the caller to write with plain system calls.
//
// Why: when a write fails inside libhdf5 1.10 (a full disk), the library keeps a half-closed file
// whose cleanup crashes its shutdown in MPI_Finalize (H5F__close_cb). Building the file in memory
// keeps disk errors out of libhdf5. The bytes are taken from the core driver's own buffer as it
// closes (file image callbacks) rather than with H5Fget_file_image, whose image of a version-2
// superblock carries a wrong checksum in 1.10.8 and leaves out the user block.
#pragma once
#include <hdf5.h>

#include <cstddef>
#include <cstdlib>
#include <functional>
#include <memory>
#include <span>

namespace sp::h5 {

struct MemoryFile {
  struct Free {
    void operator()(unsigned char* p) const { std::free(p); }
  };
  std::unique_ptr<unsigned char, Free> buffer;
  std::size_t size = 0;  // the file's bytes: its end-of-file address, user block included
  std::span<unsigned char> bytes() { return {buffer.get(), size}; }
};

// Creates a file in memory with the given creation properties and file access properties
// (libver bounds, ...; the driver is set here, and the superblock must be version 2 — libver
// low bound V18 or later — whose end-of-file address gives the size), lets fill(file) write it,
// closes it and returns its bytes. Throws sp::Error naming the failing step.
MemoryFile build_memory_file(hid_t fcpl, hid_t fapl, const std::function<void(hid_t file)>& fill);

}  // namespace sp::h5
