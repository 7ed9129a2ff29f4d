#include "core/trace/h5_memory_file.hpp"

#include <algorithm>
#include <cstring>

#include "core/run/error.hpp"
#include "core/trace/h5.hpp"

namespace sp::h5 {

namespace {

// The core driver's buffer, followed through its allocations; kept (not freed) when the file
// closes, and then the caller's to free.
struct Capture {
  unsigned char* buffer = nullptr;
  std::size_t size = 0;
  bool closed = false;
};

void* image_malloc(std::size_t size, H5FD_file_image_op_t, void* udata) {
  auto* c = static_cast<Capture*>(udata);
  void* p = std::malloc(size);
  if (p) c->buffer = static_cast<unsigned char*>(p), c->size = size;
  return p;
}

void* image_memcpy(void* dest, const void* src, std::size_t size, H5FD_file_image_op_t, void*) {
  return std::memcpy(dest, src, size);
}

void* image_realloc(void* ptr, std::size_t size, H5FD_file_image_op_t, void* udata) {
  auto* c = static_cast<Capture*>(udata);
  void* p = std::realloc(ptr, size);
  if (p) c->buffer = static_cast<unsigned char*>(p), c->size = size;
  return p;
}

herr_t image_free(void* ptr, H5FD_file_image_op_t op, void* udata) {
  auto* c = static_cast<Capture*>(udata);
  if (ptr != nullptr && ptr == c->buffer) {
    if (op == H5FD_FILE_IMAGE_OP_FILE_CLOSE) {
      c->closed = true;
      return 0;
    }
    c->buffer = nullptr, c->size = 0;
  }
  std::free(ptr);
  return 0;
}

// The capture is owned by build_memory_file; property-list copies share it.
void* udata_copy(void* udata) { return udata; }
herr_t udata_free(void*) { return 0; }

// The end-of-file address of a version-2 superblock at offset base (HDF5 file format
// specification: signature 8, version, offset and length sizes, flags, then the base,
// extension and end-of-file addresses of 8 bytes each; the end-of-file address is absolute).
std::size_t end_of_file(std::span<const unsigned char> file, std::size_t base) {
  constexpr std::size_t kEofOffset = 8 + 4 + 8 + 8;
  if (file.size() < base + kEofOffset + 8 || !std::equal(kSignature.begin(), kSignature.end(), file.begin() + base))
    fail("the in-memory file has no superblock at byte {}", base);
  if (file[base + 8] != 2 || file[base + 9] != 8)
    fail("the in-memory file's superblock is version {} with {}-byte addresses (wanted 2 and 8)", file[base + 8],
         file[base + 9]);
  std::uint64_t eof = 0;
  for (int i = 7; i >= 0; --i) eof = eof << 8 | file[base + kEofOffset + i];  // little-endian
  if (eof < base + kEofOffset || eof > file.size())
    fail("the in-memory file's end-of-file address {} is outside its {} bytes", eof, file.size());
  return static_cast<std::size_t>(eof);
}

}  // namespace

MemoryFile build_memory_file(hid_t fcpl, hid_t fapl, const std::function<void(hid_t file)>& fill) {
  Capture capture;
  PropertyList access(check(H5Pcopy(fapl), "H5Pcopy"));
  check_status(H5Pset_fapl_core(access, std::size_t{1} << 20, /*backing_store=*/false), "H5Pset_fapl_core");
  H5FD_file_image_callbacks_t callbacks{image_malloc, image_memcpy, image_realloc, image_free,
                                        udata_copy,   udata_free,   &capture};
  check_status(H5Pset_file_image_callbacks(access, &callbacks), "H5Pset_file_image_callbacks");
  hsize_t user_block = 0;
  check_status(H5Pget_userblock(fcpl, &user_block), "H5Pget_userblock");
  try {
    File f(H5Fcreate("scaleprobe in-memory file", H5F_ACC_TRUNC, fcpl, access));
    if (f.get() < 0) fail("cannot create the in-memory file");
    fill(f);
    f.close("close the in-memory file");
  } catch (...) {
    if (capture.closed) std::free(capture.buffer);
    throw;
  }
  if (!capture.closed) fail("the in-memory file left no bytes at its close");
  MemoryFile out;
  out.buffer.reset(capture.buffer);
  out.size = end_of_file({capture.buffer, capture.size}, static_cast<std::size_t>(user_block));
  return out;
}

}  // namespace sp::h5
