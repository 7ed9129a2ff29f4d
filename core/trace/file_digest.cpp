#include "core/trace/file_digest.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/run/error.hpp"

namespace sp {
namespace {

constexpr char kMagic[] = "scaleprobe-digest";
constexpr unsigned kBlockVersion = 1;
using Block = std::array<char, kDigestBlockBytes>;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

FilePtr open_file(const std::filesystem::path& path, const char* mode) {
  FilePtr f(std::fopen(path.c_str(), mode));
  if (!f) fail("cannot open: {}", std::strerror(errno));
  return f;
}

std::uint64_t file_size(std::FILE* f) {
  if (std::fseek(f, 0, SEEK_END) != 0) fail("cannot seek: {}", std::strerror(errno));
  const long size = std::ftell(f);
  if (size < 0) fail("cannot tell its size: {}", std::strerror(errno));
  return static_cast<std::uint64_t>(size);
}

// crc32 (zlib) of every byte from offset to the end of f.
std::uint32_t crc32_from(std::FILE* f, std::uint64_t offset) {
  if (std::fseek(f, static_cast<long>(offset), SEEK_SET) != 0) fail("cannot seek: {}", std::strerror(errno));
  std::vector<unsigned char> buf(std::size_t{1} << 20);
  uLong crc = crc32_z(0, Z_NULL, 0);
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) crc = crc32_z(crc, buf.data(), n);
  if (std::ferror(f)) fail("cannot read: {}", std::strerror(errno));
  return static_cast<std::uint32_t>(crc);
}

Block make_block(std::uint64_t payload, std::uint32_t crc) {
  Block b{};  // NUL padding
  std::snprintf(b.data(), b.size(), "%s %u crc32 %" PRIu64 " %08" PRIx32 "\n", kMagic, kBlockVersion, payload, crc);
  return b;
}

bool starts_with(const Block& b, std::size_t n, const void* prefix, std::size_t len) {
  return n >= len && std::memcmp(b.data(), prefix, len) == 0;
}

}  // namespace

h5::PropertyList digest_file_creation() {
  h5::PropertyList fcpl(h5::check(H5Pcreate(H5P_FILE_CREATE), "H5Pcreate"));
  h5::check_status(H5Pset_userblock(fcpl, kDigestBlockBytes), "H5Pset_userblock");
  return fcpl;
}

void stamp_file_digest(const std::filesystem::path& path) {
  FilePtr f = open_file(path, "r+b");
  const std::uint64_t size = file_size(f.get());
  std::array<unsigned char, 8> signature{};
  if (size < kDigestBlockBytes + signature.size() || std::fseek(f.get(), kDigestBlockBytes, SEEK_SET) != 0 ||
      std::fread(signature.data(), 1, signature.size(), f.get()) != signature.size() || signature != h5::kSignature)
    fail("no HDF5 superblock after a {}-byte digest block (not created with digest_file_creation)", kDigestBlockBytes);
  const Block block = make_block(size - kDigestBlockBytes, crc32_from(f.get(), kDigestBlockBytes));
  if (std::fseek(f.get(), 0, SEEK_SET) != 0 || std::fwrite(block.data(), 1, block.size(), f.get()) != block.size() ||
      std::fflush(f.get()) != 0)
    fail("cannot write its digest block: {}", std::strerror(errno));
  if (std::fclose(f.release()) != 0) fail("cannot write its digest block: {}", std::strerror(errno));
}

void stamp_image_digest(std::span<unsigned char> image) {
  if (image.size() < kDigestBlockBytes + h5::kSignature.size() ||
      !std::equal(h5::kSignature.begin(), h5::kSignature.end(), image.begin() + kDigestBlockBytes))
    fail("no HDF5 superblock after a {}-byte digest block (not created with digest_file_creation)", kDigestBlockBytes);
  const std::span<const unsigned char> payload = image.subspan(kDigestBlockBytes);
  const auto crc = static_cast<std::uint32_t>(crc32_z(crc32_z(0, Z_NULL, 0), payload.data(), payload.size()));
  const Block block = make_block(payload.size(), crc);
  std::memcpy(image.data(), block.data(), block.size());
}

namespace {

// What a digest block says: the payload's length and crc32; nullopt for the older format (the file
// starts with the HDF5 signature). n is how many of the block's bytes the file has. Throws the
// one-line refusals verify_*_digest document.
struct DigestLine {
  std::uint64_t payload = 0;
  std::uint32_t crc = 0;
};
std::optional<DigestLine> parse_digest_block(const Block& block, std::size_t n) {
  if (starts_with(block, n, h5::kSignature.data(), h5::kSignature.size())) return std::nullopt;
  if (!starts_with(block, n, kMagic, sizeof kMagic - 1)) fail("not a readable HDF5 file (corrupt or truncated)");
  if (n < block.size()) fail("corrupt: truncated inside its {}-byte digest block", kDigestBlockBytes);
  unsigned version = 0;
  unsigned long long payload = 0;
  unsigned crc = 0;
  char algorithm[16] = {};
  Block line = block;
  line.back() = '\0';  // sscanf must stop inside the block
  const int got = std::sscanf(line.data(), "scaleprobe-digest %u %15s %llu %8x", &version, algorithm, &payload, &crc);
  if (got == 4 && version != kBlockVersion)
    fail("digest block version {} is not one this build reads ({}; a newer scaleprobe wrote it?)", version,
         kBlockVersion);
  if (got != 4 || std::strcmp(algorithm, "crc32") != 0 || make_block(payload, crc) != block)
    fail("corrupt: its digest block is damaged");
  return DigestLine{payload, crc};
}

void check_payload_size(std::uint64_t size, std::uint64_t payload) {
  if (size != payload)
    fail("corrupt: {}: {} bytes after the digest block, the digest covers {}",
         size < payload ? "truncated" : "longer than written", size, payload);
}

void check_crc(std::uint32_t computed, std::uint32_t crc) {
  if (computed != crc) fail("corrupt: whole-file crc32 {:08x} does not match its digest {:08x}", computed, crc);
}

}  // namespace

FileDigest verify_file_digest(const std::filesystem::path& path) {
  FilePtr f = open_file(path, "rb");
  Block block{};
  const std::size_t n = std::fread(block.data(), 1, block.size(), f.get());
  const std::optional<DigestLine> line = parse_digest_block(block, n);
  if (!line) return FileDigest::absent;
  check_payload_size(file_size(f.get()) - kDigestBlockBytes, line->payload);
  check_crc(crc32_from(f.get(), kDigestBlockBytes), line->crc);
  return FileDigest::verified;
}

FileDigest verify_image_digest(std::span<const unsigned char> image) {
  Block block{};
  const std::size_t n = std::min(image.size(), block.size());
  if (n > 0) std::memcpy(block.data(), image.data(), n);  // an empty image's data() may be null
  const std::optional<DigestLine> line = parse_digest_block(block, n);
  if (!line) return FileDigest::absent;
  check_payload_size(image.size() - kDigestBlockBytes, line->payload);
  const std::span<const unsigned char> rest = image.subspan(kDigestBlockBytes);
  check_crc(static_cast<std::uint32_t>(crc32_z(crc32_z(0, Z_NULL, 0), rest.data(), rest.size())), line->crc);
  return FileDigest::verified;
}

}  // namespace sp
