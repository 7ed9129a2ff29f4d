// Size parsing and size ranges (core/sizes).
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/sizes.hpp"

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
  EXPECT_EQ(sp::size_range(1, 3, 1.5), (std::vector<std::uint64_t>{1, 2}));  // 1, 1.5, 2.25 -> 1, 2
  EXPECT_EQ(sp::size_range(1, 4, 1.5), (std::vector<std::uint64_t>{1, 2, 3}));  // rounded, duplicates dropped
  EXPECT_THROW(sp::size_range(64, 8, 2), sp::Error);
  EXPECT_THROW(sp::size_range(8, 64, 1), sp::Error);
  EXPECT_THROW(sp::size_range(8, 64, 0.5), sp::Error);
}

TEST(FormatSize, Readable) {
  EXPECT_EQ(sp::format_size(8), "8");
  EXPECT_EQ(sp::format_size(1024), "1K");
  EXPECT_EQ(sp::format_size(1536), "1.5K");
  EXPECT_EQ(sp::format_size(64u << 20), "64M");
}
