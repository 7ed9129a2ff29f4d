// Gradient layouts and DDP-style bucket packing (collectives/buckets).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <numeric>

#include "collectives/buckets.hpp"
#include "core/run/error.hpp"

using namespace sp::coll;

TEST(Layouts, PresetsMatchPublishedParameterCounts) {
  GradientLayout r = layout_preset("resnet50");
  EXPECT_EQ(r.total_numel(), 25557032u);  // torchvision.models.resnet50()
  EXPECT_EQ(r.tensors.size(), 161u);
  EXPECT_EQ(r.tensors.front().name, "conv1.weight");
  EXPECT_EQ(r.tensors.back().name, "fc.bias");
  GradientLayout b = layout_preset("bert-base");
  EXPECT_EQ(b.total_numel(), 109482240u);  // bert-base-uncased BertModel incl. pooler
  EXPECT_EQ(b.tensors.size(), 199u);
  EXPECT_THROW(layout_preset("vgg"), sp::Error);
}

// The case checked against torch.distributed._compute_bucket_assignment_by_size on the
// reversed tensor list with limits [1 MiB, 2 MiB] (PyTorch 1.13): buckets [5], [4,3,2,1], [0].
TEST(Packing, MatchesDdpOnAHandCase) {
  GradientLayout l{"hand", {}};
  for (std::size_t n : {100, 300000, 10, 200000, 50000, 400000}) l.tensors.push_back({"t", n});
  std::vector<Bucket> b = pack_buckets(l, 4, {"2", 1 << 20, 2 << 20});
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].tensors, (std::vector<int>{5}));
  EXPECT_EQ(b[1].tensors, (std::vector<int>{4, 3, 2, 1}));
  EXPECT_EQ(b[2].tensors, (std::vector<int>{0}));
}

TEST(Packing, BucketsTileTheBufferInReverseOrder) {
  GradientLayout l = layout_preset("resnet50");
  for (const char* cap : {"tensor", "1", "5", "25", "100", "all", "0.25"}) {
    std::vector<Bucket> b = pack_buckets(l, 4, parse_bucket_cap(cap));
    std::size_t offset = 0;
    int expected_tensor = static_cast<int>(l.tensors.size()) - 1;
    for (std::size_t i = 0; i < b.size(); ++i) {
      EXPECT_EQ(b[i].offset, offset) << cap;
      std::size_t numel = 0;
      for (int t : b[i].tensors) {
        EXPECT_EQ(t, expected_tensor--) << "reverse order, never split";
        numel += l.tensors[t].numel;
      }
      EXPECT_EQ(numel, b[i].numel);
      offset += numel;
      // Every bucket but the last reached its cap; removing its last tensor would undershoot.
      BucketCap c = parse_bucket_cap(cap);
      std::size_t limit = i == 0 ? c.first_bytes : c.cap_bytes;
      if (i + 1 < b.size()) {
        EXPECT_GE(numel * 4, limit) << cap << " bucket " << i;
        if (limit > 0) {
          EXPECT_LT((numel - l.tensors[b[i].tensors.back()].numel) * 4, limit) << cap << " bucket " << i;
        }
      }
    }
    EXPECT_EQ(offset, l.total_numel()) << cap;
    EXPECT_EQ(expected_tensor, -1) << cap;
  }
  EXPECT_EQ(pack_buckets(l, 4, parse_bucket_cap("tensor")).size(), l.tensors.size());
  EXPECT_EQ(pack_buckets(l, 4, parse_bucket_cap("all")).size(), 1u);
  // More buckets with a smaller cap.
  EXPECT_GT(pack_buckets(l, 4, parse_bucket_cap("5")).size(), pack_buckets(l, 4, parse_bucket_cap("25")).size());
}

TEST(Packing, CapParsing) {
  EXPECT_EQ(parse_bucket_cap("25").cap_bytes, 25u << 20);
  EXPECT_EQ(parse_bucket_cap("25").first_bytes, kFirstBucketBytes);
  EXPECT_EQ(parse_bucket_cap("0.5").cap_bytes, 512u << 10);
  for (const char* bad : {"", "-1", "0", "25MB", "abc", "1e9", "1e-166", "1e-7"})
    EXPECT_THROW(parse_bucket_cap(bad), sp::Error) << bad;
}

TEST(Layouts, FileFormat) {
  std::string path = ::testing::TempDir() + "layout_ok.txt";
  std::ofstream(path) << "# a comment\nconv.weight 64x3x7x7\n\nbias 64   # trailing comment\n1000\n";
  GradientLayout l = load_layout(path);
  ASSERT_EQ(l.tensors.size(), 3u);
  EXPECT_EQ(l.tensors[0].name, "conv.weight");
  EXPECT_EQ(l.tensors[0].numel, 9408u);
  EXPECT_EQ(l.tensors[1].numel, 64u);
  EXPECT_EQ(l.tensors[2].numel, 1000u);

  auto rejects = [](const std::string& text, const std::string& fragment) {
    std::string p = ::testing::TempDir() + "layout_bad.txt";
    std::ofstream(p) << text;
    try {
      load_layout(p);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const sp::Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  rejects("w 64x0\n", ":1:");
  rejects("ok 5\nw 64xx3\n", ":2:");
  rejects("a b c\n", "expected");
  rejects("# nothing\n", "no tensors");
  EXPECT_THROW(load_layout("/nonexistent/layout.txt"), sp::Error);
}

// Sizes from a layout file are overflow-checked: the old loader accepted the line
// 4611686018427387904 (2^62 elements), whose f32 byte count wraps to 0 and allocated 1 byte.
TEST(Layouts, SizesThatWouldWrapAreErrorsNamingTheLine) {
  auto message = [](const std::string& text) -> std::string {
    std::string p = ::testing::TempDir() + "layout_huge.txt";
    std::ofstream(p) << text;
    try {
      GradientLayout l = load_layout(p);
      return "accepted, " + std::to_string(l.total_numel()) + " elements";
    } catch (const sp::Error& e) {
      return e.what();
    }
  };
  auto expect_error = [&](const std::string& text, const std::string& fragment) {
    std::string m = message(text);
    EXPECT_NE(m.find(fragment), std::string::npos) << text << " -> " << m;
  };
  expect_error("4611686018427387904\n", "layout_huge.txt:1: the layout would hold more than");
  expect_error("w 4294967296x4294967296\n", ":1: tensor shape '4294967296x4294967296' has more elements than fit");
  expect_error("a 1024\nb 2x3\nw 65536x65536x65536x65536\n", ":3: tensor shape");
  expect_error("w 99999999999999999999\n", ":1: tensor dimension '99999999999999999999' does not fit in 64 bits");
  // Each tensor fits, their sum does not: the running total names the line that crosses.
  expect_error("a 1152921504606846976\nb 1152921504606846976\n", ":2: the layout would hold more than");
  // Just below the bound is accepted (never allocated here).
  EXPECT_EQ(message(std::to_string(kMaxLayoutElements) + "\n"),
            "accepted, " + std::to_string(kMaxLayoutElements) + " elements");
}

TEST(Layouts, WeakScalingAndPackingAreChecked) {
  GradientLayout l{"big", {{"a", std::size_t(1) << 40}, {"b", 1000}}};
  EXPECT_EQ(l.scaled(4).tensors[0].numel, std::size_t(1) << 42);
  EXPECT_THROW(l.scaled(std::size_t(1) << 21), sp::Error);  // 2^61 elements: past the bound
  EXPECT_THROW(l.scaled(std::size_t(1) << 30), sp::Error);  // 2^70: the product itself wraps
  try {
    l.scaled(std::size_t(1) << 24);
    FAIL();
  } catch (const sp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("--scaling weak tensor 'a'"), std::string::npos) << e.what();
  }
  // A layout built in code beyond the bound: its total and its packing refuse rather than wrap.
  GradientLayout huge{"huge", {{"a", SIZE_MAX / 2}, {"b", SIZE_MAX / 2 + 2}}};
  EXPECT_THROW(huge.total_numel(), sp::Error);
  EXPECT_THROW(pack_buckets(huge, 4, parse_bucket_cap("all")), sp::Error);
  EXPECT_THROW(pack_buckets(GradientLayout{"x", {{"a", SIZE_MAX / 2}}}, 4, parse_bucket_cap("25")), sp::Error);
}
