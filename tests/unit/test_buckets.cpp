// Gradient layouts and DDP-style bucket packing (collectives/buckets).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <numeric>

#include "collectives/buckets.hpp"
#include "core/error.hpp"

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
        if (limit > 0) EXPECT_LT((numel - l.tensors[b[i].tensors.back()].numel) * 4, limit) << cap << " bucket " << i;
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
  for (const char* bad : {"", "-1", "0", "25MB", "abc", "1e9"}) EXPECT_THROW(parse_bucket_cap(bad), sp::Error) << bad;
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
