// The cache topology (hwloc) agrees with the kernel's own description, cache-sized buffers are
// bounded whatever the cache, and flushing a buffer from the cache leaves its contents intact.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <vector>

#include "core/measure/cache_flush.hpp"
#include "core/run/sizes.hpp"
#include "core/measure/topology.hpp"
#include "tests/lib/optional_part.hpp"

using namespace sp;

namespace {

constexpr std::size_t MiB = std::size_t(1) << 20;

// The largest cache level the kernel describes for cpu0 (sysfs), in bytes; 0 if there is none.
std::size_t sysfs_last_level_bytes(int* level_out) {
  std::size_t bytes = 0;
  int best = 0;
  for (int i = 0; i < 8; ++i) {
    std::filesystem::path dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i);
    std::ifstream level(dir / "level"), type(dir / "type"), size(dir / "size");
    int l = 0;
    std::string t, s;
    if (!(level >> l) || !(type >> t) || !(size >> s)) continue;
    if (t == "Instruction" || l < best) continue;
    best = l;
    bytes = parse_size(s);
  }
  *level_out = best;
  return bytes;
}

RankCacheShare share(std::size_t llc, int ranks, std::size_t private_bytes = 2 * MiB) {
  RankCacheShare s;
  s.llc_bytes = llc;
  s.node_ranks = s.llc_ranks = ranks;
  s.private_bytes = private_bytes;
  return s;
}

}  // namespace

TEST(Topology, LastLevelMatchesTheKernelsDescription) {
  int level = 0;
  std::size_t want = sysfs_last_level_bytes(&level);
  if (want == 0) SP_SKIP_OPTIONAL_PART("sysfs-cache", "no cache description in /sys on this machine");
  const CacheLevel* llc = cache_topology().last_level();
  ASSERT_NE(llc, nullptr) << cache_topology().describe();
  EXPECT_EQ(llc->level, level);
  EXPECT_EQ(llc->bytes, want) << cache_topology().describe();
  EXPECT_GE(llc->pus_per_instance, 1);
  EXPECT_GE(cache_topology().line_bytes, 32u);
}

TEST(Topology, CopyProbeArraysAreBoundedWhateverTheCache) {
  // A 480 MiB L3 (seen on this project's machines) or a 4 GiB one: capped, never 4x the cache.
  EXPECT_EQ(copy_probe_array_bytes(share(480 * MiB, 1)), kCopyArrayMax);
  EXPECT_EQ(copy_probe_array_bytes(share(4096 * MiB, 1)), kCopyArrayMax);
  EXPECT_EQ(copy_probe_array_bytes(share(0, 1)), kCopyArrayMax);  // unknown cache
  // 128 ranks under a 500 MiB L3: 4 x (500/128 + 2) MiB each, about 23.6 MiB.
  std::size_t many = copy_probe_array_bytes(share(500 * MiB, 128));
  EXPECT_GT(many, 23 * MiB);
  EXPECT_LT(many, 24 * MiB);
  // A small cache shared by many ranks: the floor, so the array never fits in the private levels.
  EXPECT_EQ(copy_probe_array_bytes(share(8 * MiB, 8)), kCopyArrayMin);
  EXPECT_GE(kCopyArrayMin, 4 * (2 * MiB));
  // The stated bound: two arrays per rank.
  for (std::size_t llc : {std::size_t(0), 32 * MiB, 480 * MiB, std::size_t(1) << 40})
    for (int ranks : {1, 2, 4, 64, 128}) EXPECT_LE(2 * copy_probe_array_bytes(share(llc, ranks)), 128 * MiB);
}

TEST(Topology, ShareDividesTheLastLevelAmongItsRanks) {
  EXPECT_EQ(share(480 * MiB, 4, 0).share_bytes(), 120 * MiB);
  EXPECT_EQ(share(480 * MiB, 1, 2 * MiB).share_bytes(), 482 * MiB);
}

TEST(CacheFlush, LeavesTheContentsIntact) {
  std::vector<int> v(100000);
  std::iota(v.begin(), v.end(), 7);
  flush_from_cache(v.data() + 3, 1);                   // one byte, unaligned
  flush_from_cache(v.data() + 1, 4097);                // crosses lines and a page
  flush_from_cache(v.data(), v.size() * sizeof(int));  // all of it
  flush_from_cache(v.data(), 0);                       // nothing
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], static_cast<int>(i) + 7);
}
