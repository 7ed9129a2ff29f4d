// Message-size lists: "-b 8 -e 64M -f 2" geometric ranges and explicit lists such as "8,1K,64K",
// and overflow-checked arithmetic on sizes (a wrapped byte count allocates too little and writes
// past it, so every product and sum of sizes read from the user goes through these).
// A size is decimal digits with an optional fraction ("1.5K") and an optional binary suffix
// (K = 1024, M, G; optionally followed by B or iB; case-insensitive). No sign, no exponent.
// Every function here takes plain text and throws sp::Error on bad input (a fuzz target calls
// parse_size / parse_size_list directly).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sp {

// "64M" -> 67108864. Throws sp::Error naming the text when it is malformed, not a whole number of
// bytes, or does not fit in 64 bits.
std::uint64_t parse_size(std::string_view text);
// "8,1K,64K" -> {8, 1024, 65536}; order kept, duplicates kept, empty items are an error.
std::vector<std::uint64_t> parse_size_list(std::string_view text);
// min, min*factor, ... <= max. factor must be > 1 unless min == max; min 0 yields 0 then 1.
// At most kMaxRangeSteps steps (a factor barely above 1 is an error, not an endless loop).
inline constexpr int kMaxRangeSteps = 100000;
std::vector<std::uint64_t> size_range(std::uint64_t min, std::uint64_t max, double factor);
// a * b and a + b, or an sp::Error naming `what` when the result does not fit in 64 bits.
std::uint64_t checked_product(std::uint64_t a, std::uint64_t b, std::string_view what);
std::uint64_t checked_sum(std::uint64_t a, std::uint64_t b, std::string_view what);
// This machine's physical memory in bytes (0 if unknown).
std::uint64_t physical_memory_bytes();
// 67108864 -> "64M", 1536 -> "1.5K" (for tables, labels and messages; units up to E).
std::string format_size(std::uint64_t bytes);
// The same where it is exact, else the decimal bytes (65532, not "64K"): a table's size column.
std::string format_size_exact(std::uint64_t bytes);

}  // namespace sp
