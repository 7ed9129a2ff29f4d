// Fuzz target: gradient-layout files (collectives/buckets.cpp, load_layout_file) and the bucket
// packing that consumes them.
//
// Input: the text of a layout file. Besides "sp::Error or success": a layout whose element counts
// do not fit in 64 bits (a product of dimensions, or the sum over tensors) must be refused, not
// wrapped -- a wrapped count sizes the buffers that bucket_sweep then writes past. This is checked
// against an independent reading of the same lines with overflow-checked arithmetic. (Counts
// that fit but whose bytes do not are bucket_sweep's to refuse, out of this target's reach.)
#include <charconv>
#include <sstream>
#include <string>

#include "collectives/buckets.hpp"
#include "core/run/error.hpp"
#include "fuzz_util.hpp"

namespace {

using sp::fuzz::finding;

// True when some count of the layout (as load_layout_file reads it) overflows 64 bits; false for
// layouts without overflow (including malformed ones, which the loader must refuse anyway).
bool counts_overflow(const std::string& text) {
  std::istringstream in(text);
  std::uint64_t total = 0;
  bool overflow = false;
  for (std::string line; std::getline(in, line);) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string shape;
    for (std::string w; words >> w;) shape = w;
    if (shape.empty()) continue;
    std::uint64_t n = 1;
    for (std::size_t pos = 0; pos <= shape.size();) {
      const std::size_t x = std::min(shape.find('x', pos), shape.size());
      std::uint64_t d = 0;
      auto [end, ec] = std::from_chars(shape.data() + pos, shape.data() + x, d);
      if (ec != std::errc() || end != shape.data() + x) return false;  // malformed: not this check's business
      overflow |= __builtin_mul_overflow(n, d, &n);
      pos = x + 1;
    }
    overflow |= __builtin_add_overflow(total, n, &total);
  }
  return overflow;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static sp::fuzz::InputFile file(".layout");
  const auto read = sp::fuzz::read_input_file(file, data, size, sp::coll::load_layout_file);
  if (!read) return 0;
  const sp::coll::GradientLayout& layout = *read;
  const std::string text(sp::fuzz::as_text(data, size));
  if (counts_overflow(text)) finding("load_layout_file accepted a layout whose element count overflows 64 bits");
  if (layout.tensors.empty()) finding("load_layout_file returned no tensors");
  for (const auto& t : layout.tensors)
    if (t.numel == 0) finding("load_layout_file returned a tensor of 0 elements");
  // Packing must tile [0, total) for every cap kind.
  for (const char* cap_text : {"tensor", "all", "25", "0.001"}) {
    const sp::coll::BucketCap cap = sp::coll::parse_bucket_cap(cap_text);
    std::size_t next = 0;
    for (const auto& b : sp::coll::pack_buckets(layout, 4, cap)) {
      if (b.offset != next || b.numel == 0 || b.tensors.empty())
        finding("pack_buckets: buckets do not tile the buffer");
      next += b.numel;
    }
    if (next != layout.total_numel()) finding("pack_buckets: buckets do not cover the buffer");
  }
  try {
    layout.scaled(3);
  } catch (const sp::Error& e) {
    sp::fuzz::refused(e);
  }
  return 0;
}
