// Message-size lists: "-b 8 -e 64M -f 2" geometric ranges and explicit lists such as "8,1K,64K".
// Suffixes are binary (K = 1024): K, M, G, optionally followed by B or iB, case-insensitive.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace sp {

// "64M" -> 67108864. Throws sp::Error naming the malformed text.
std::uint64_t parse_size(std::string_view text);
// "8,1K,64K" -> {8, 1024, 65536}; order kept, duplicates kept, empty items are an error.
std::vector<std::uint64_t> parse_size_list(std::string_view text);
// min, min*factor, ... <= max. factor must be > 1 unless min == max; min 0 yields 0 then 1.
std::vector<std::uint64_t> size_range(std::uint64_t min, std::uint64_t max, double factor);
// a * b, or an sp::Error naming `what` when the product does not fit in 64 bits.
std::uint64_t checked_product(std::uint64_t a, std::uint64_t b, std::string_view what);
// This machine's physical memory in bytes (0 if unknown).
std::uint64_t physical_memory_bytes();
// 67108864 -> "64M", 1536 -> "1.5K" (for tables and labels).
std::string format_size(std::uint64_t bytes);

}  // namespace sp
