// tests/lib/optional_part.hpp: which GoogleTest skips the list allows (SP_SKIP_OPTIONAL_PART skips
// when optional_part_refusal is empty and fails with it otherwise). The list is a temporary file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/lib/optional_part.hpp"

namespace {

class OptionalPart : public ::testing::Test {
 protected:
  void SetUp() override {
    list_ = std::filesystem::temp_directory_path() / ("optional_parts_" + std::to_string(::getpid()) + ".txt");
    std::ofstream(list_) << "# comment\n\ngpu  always  no device\ntorch  SCALEPROBE_NO_TORCH=1  not installed\n";
    ::setenv("SCALEPROBE_OPTIONAL_PARTS", list_.c_str(), 1);
    ::unsetenv("SCALEPROBE_CI");
    ::unsetenv("SCALEPROBE_NO_TORCH");
  }
  void TearDown() override {
    ::unsetenv("SCALEPROBE_OPTIONAL_PARTS");
    ::unsetenv("SCALEPROBE_CI");
    ::unsetenv("SCALEPROBE_NO_TORCH");
    std::filesystem::remove(list_);
  }
  std::filesystem::path list_;
};

}  // namespace

TEST_F(OptionalPart, OutsideCiEveryListedPartMaySkip) {
  EXPECT_EQ(sp::test::optional_part_refusal("gpu"), "");
  EXPECT_EQ(sp::test::optional_part_refusal("torch"), "");
}

TEST_F(OptionalPart, InCiOnlyPartsOptionalHereMaySkip) {
  ::setenv("SCALEPROBE_CI", "1", 1);
  EXPECT_EQ(sp::test::optional_part_refusal("gpu"), "");
  EXPECT_NE(sp::test::optional_part_refusal("torch").find("optional only with SCALEPROBE_NO_TORCH=1"),
            std::string::npos);
  ::setenv("SCALEPROBE_NO_TORCH", "1", 1);
  EXPECT_EQ(sp::test::optional_part_refusal("torch"), "");
}

TEST_F(OptionalPart, AnUnlistedPartNeverSkips) {
  EXPECT_NE(sp::test::optional_part_refusal("sysfs-cache").find("not an optional part"), std::string::npos);
  EXPECT_NE(sp::test::optional_part_refusal("comment").find("not an optional part"), std::string::npos);
  ::setenv("SCALEPROBE_OPTIONAL_PARTS", "/nonexistent/list.txt", 1);
  EXPECT_NE(sp::test::optional_part_refusal("gpu").find("not an optional part"), std::string::npos);
}

// The real list names the part the topology test skips for.
TEST(OptionalPartsList, NamesTheSysfsCachePart) {
  ::unsetenv("SCALEPROBE_OPTIONAL_PARTS");
  ::unsetenv("SCALEPROBE_CI");
  EXPECT_EQ(sp::test::optional_part_refusal("sysfs-cache"), "");
}
