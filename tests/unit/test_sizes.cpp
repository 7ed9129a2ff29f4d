// Size parsing and size ranges (core/sizes).
#include <gtest/gtest.h>

#include <limits>

#include "core/run/error.hpp"
#include "core/run/options.hpp"
#include "core/run/sizes.hpp"

using sp::parse_size;

TEST(ParseSize, PlainAndSuffixed) {
  EXPECT_EQ(parse_size("0"), 0u);
  EXPECT_EQ(parse_size("8"), 8u);
  EXPECT_EQ(parse_size("1K"), 1024u);
  EXPECT_EQ(parse_size("1k"), 1024u);
  EXPECT_EQ(parse_size("64M"), 64u << 20);
  EXPECT_EQ(parse_size("2G"), 2ull << 30);
  EXPECT_EQ(parse_size("1.5K"), 1536u);
  EXPECT_EQ(parse_size("4KiB"), 4096u);
  EXPECT_EQ(parse_size("16MB"), 16u << 20);
  EXPECT_EQ(parse_size(" 8 "), 8u);
}

TEST(ParseSize, MalformedIsAnError) {
  for (const char* bad : {"", "x", "K", "-8", "8X", "1.3", "8 K M", "1e30", "nan"}) {
    EXPECT_THROW(parse_size(bad), sp::Error) << bad;
  }
  try {
    parse_size("12Q");
    FAIL();
  } catch (const sp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("12Q"), std::string::npos) << "message names the input";
  }
}

TEST(SizeList, ExplicitList) {
  EXPECT_EQ(sp::parse_size_list("8,1K,64K"), (std::vector<std::uint64_t>{8, 1024, 65536}));
  EXPECT_EQ(sp::parse_size_list("1M"), (std::vector<std::uint64_t>{1 << 20}));
  EXPECT_THROW(sp::parse_size_list("8,,16"), sp::Error);
  EXPECT_THROW(sp::parse_size_list("8,"), sp::Error);
  EXPECT_THROW(sp::parse_size_list(""), sp::Error);
  EXPECT_THROW(sp::parse_size_list("8,abc"), sp::Error);
}

TEST(SizeRange, Geometric) {
  EXPECT_EQ(sp::size_range(8, 64, 2), (std::vector<std::uint64_t>{8, 16, 32, 64}));
  EXPECT_EQ(sp::size_range(8, 100, 4), (std::vector<std::uint64_t>{8, 32}));
  EXPECT_EQ(sp::size_range(0, 4, 2), (std::vector<std::uint64_t>{0, 1, 2, 4}));
  EXPECT_EQ(sp::size_range(5, 5, 1), (std::vector<std::uint64_t>{5}));
  EXPECT_EQ(sp::size_range(1, 3, 1.5), (std::vector<std::uint64_t>{1, 2}));     // 1, 1.5, 2.25 -> 1, 2
  EXPECT_EQ(sp::size_range(1, 4, 1.5), (std::vector<std::uint64_t>{1, 2, 3}));  // rounded, duplicates dropped
  EXPECT_THROW(sp::size_range(64, 8, 2), sp::Error);
  EXPECT_THROW(sp::size_range(8, 64, 1), sp::Error);
  EXPECT_THROW(sp::size_range(8, 64, 0.5), sp::Error);
}

// 64-bit limits: exact up to 2^64 - 1, an error one past it, never a silently rounded double
// (the old parser went through a double: 99999999999999999 became 100000000000000000).
TEST(ParseSize, ExactTo64BitsAndOverflowIsAnError) {
  EXPECT_EQ(parse_size("99999999999999999"), 99999999999999999ull);
  EXPECT_EQ(parse_size("18446744073709551615"), 18446744073709551615ull);
  EXPECT_EQ(parse_size("17179869183G"), 17179869183ull << 30);  // (2^34 - 1) GiB fits
  EXPECT_EQ(parse_size("1.0009765625K"), 1025u);                // 1 KiB + 1 byte, exact
  EXPECT_EQ(parse_size("0.5K"), 512u);
  EXPECT_EQ(parse_size(".5K"), 512u);
  EXPECT_EQ(parse_size("8."), 8u);
  EXPECT_EQ(parse_size("2.50000000000000000000000000K"), 2560u);  // trailing zeros are not digits
  for (const char* big : {"18446744073709551616", "99999999999999999999999", "17179869184G", "16777216T"}) {
    try {
      parse_size(big);
      ADD_FAILURE() << "accepted " << big;
    } catch (const sp::Error& e) {
      std::string m = e.what();
      if (std::string(big) != "16777216T") {
        EXPECT_NE(m.find("does not fit in 64 bits"), std::string::npos) << m;
      }
    }
  }
  EXPECT_THROW(parse_size("18446744073709551615.5"), sp::Error);   // not whole
  EXPECT_THROW(parse_size("18446744073709551615.5K"), sp::Error);  // too large
  EXPECT_THROW(parse_size("1.0000000000000000000001K"), sp::Error);
  EXPECT_THROW(parse_size(std::string_view("8\0", 2)), sp::Error);  // an embedded NUL
  for (const char* bad : {".", ".K", "1..2", "1.2.3", "+8", "0x10", "1e3", "8KK", "8 K", "1,5"})
    EXPECT_THROW(parse_size(bad), sp::Error) << bad;
}

TEST(SizeList, ItemsAreCheckedOneByOne) {
  EXPECT_THROW(sp::parse_size_list("8,18446744073709551616"), sp::Error);
  EXPECT_THROW(sp::parse_size_list(","), sp::Error);
  EXPECT_THROW(sp::parse_size_list(" , 8"), sp::Error);
  EXPECT_EQ(sp::parse_size_list(" 8 , 1K "), (std::vector<std::uint64_t>{8, 1024}));
}

TEST(SizeRange, ReachesTheTopOf64BitsAndRefusesEndlessRanges) {
  std::vector<std::uint64_t> r = sp::size_range(1ull << 62, ~0ull, 2);
  EXPECT_EQ(r, (std::vector<std::uint64_t>{1ull << 62, 1ull << 63}));
  EXPECT_EQ(sp::size_range(0, ~0ull, 2).size(), 65u);                 // 0, then 2^0 .. 2^63
  EXPECT_THROW(sp::size_range(1, 1ull << 40, 1.0000001), sp::Error);  // ~3e8 steps
  EXPECT_THROW(sp::size_range(1, 8, std::numeric_limits<double>::infinity()), sp::Error);
  EXPECT_THROW(sp::size_range(1, 8, std::numeric_limits<double>::quiet_NaN()), sp::Error);
}

TEST(CheckedArithmetic, ProductsAndSumsThatWrapAreErrors) {
  EXPECT_EQ(sp::checked_product(1ull << 32, (1ull << 32) - 1, "x"), (1ull << 32) * ((1ull << 32) - 1));
  EXPECT_EQ(sp::checked_sum(~0ull - 1, 1, "x"), ~0ull);
  EXPECT_EQ(sp::checked_product(0, ~0ull, "x"), 0u);
  try {
    sp::checked_product(1ull << 62, 4, "layout bytes");
    FAIL();
  } catch (const sp::Error& e) {
    EXPECT_EQ(std::string(e.what()), "layout bytes: 4611686018427387904 x 4 does not fit in 64 bits");
  }
  EXPECT_THROW(sp::checked_sum(~0ull, 1, "x"), sp::Error);
  EXPECT_THROW(sp::checked_product(1ull << 32, 1ull << 32, "x"), sp::Error);
}

TEST(FormatSize, Readable) {
  EXPECT_EQ(sp::format_size(8), "8");
  EXPECT_EQ(sp::format_size(1024), "1K");
  EXPECT_EQ(sp::format_size(1536), "1.5K");
  // format_size_exact: the same where it is exact, else the bytes (not "64K" for 65532 bytes, a
  // collective's size rounded down to the ranks).
  EXPECT_EQ(sp::format_size_exact(1536), "1.5K");
  EXPECT_EQ(sp::format_size_exact(65532), "65532");
  EXPECT_EQ(sp::format_size_exact(1048572), "1048572");
  EXPECT_EQ(sp::format_size(64u << 20), "64M");
  EXPECT_EQ(sp::format_size(3ull << 40), "3T");
  EXPECT_EQ(sp::format_size(~0ull), "16E");
}

TEST(BoundedInteger, InRangeOrOneLineErrorNamingTheSetting) {
  EXPECT_EQ(sp::parse_bounded_integer("N", "1", 1, 86400, "seconds"), 1);
  EXPECT_EQ(sp::parse_bounded_integer("N", "86400", 1, 86400, "seconds"), 86400);
  for (const std::string bad : {"", "0", "86401", "x", "1.5", "3 ", " 3", "-1", "99999999999999999999999"}) {
    try {
      sp::parse_bounded_integer("SCALEPROBE_X", bad, 1, 86400, "whole seconds");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const sp::Error& e) {
      EXPECT_EQ(std::string(e.what()), "SCALEPROBE_X='" + bad + "': expected whole seconds from 1 to 86400");
    }
  }
}
