// The node's cache hierarchy (read through hwloc) and how much of the last-level cache one rank
// can call its own. Buffers meant to miss the cache (the copy-bandwidth probe) are sized from the
// rank's share, never from the whole cache, and capped: a node with 128 ranks and a 500 MiB L3
// must not give every rank gigabytes (sysconf alone reported 480 MiB here and the probe OOM-killed
// a 4-rank job).
#pragma once
#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

namespace sp {

struct CacheLevel {
  int level = 0;             // 1, 2, 3, ...
  std::string type;          // "data", "unified" (instruction caches are left out)
  std::size_t bytes = 0;     // one instance
  int instances = 0;         // instances on the node
  int pus_per_instance = 0;  // hardware threads sharing one instance
};

struct CacheTopology {
  std::vector<CacheLevel> levels;  // data and unified caches, L1 first
  std::size_t line_bytes = 64;
  std::string source;  // "hwloc", or "hwloc + SCALEPROBE_LLC_BYTES"
  const CacheLevel* last_level() const { return levels.empty() ? nullptr : &levels.back(); }
  // One line for provenance, e.g. "L1d 48K x2 (1 PU each); L2 2M x2 (1 PU each); L3 480M x1 (2 PUs each)".
  std::string describe() const;
};

// Read once per process. SCALEPROBE_LLC_BYTES (a size such as 32M) replaces the last level's size
// for machines whose hypervisor reports a wrong one; it is recorded in provenance.
const CacheTopology& cache_topology();

// The caches one core has to itself: every level below the last (L1d + L2 on most CPUs; 0 where
// hwloc knows none). A result larger than that has left them before its caller reads it.
std::size_t core_private_cache_bytes();

// Counts hwloc reports for this machine (0 where unknown): what "cores and threads" means on it.
struct MachineCounts {
  int packages = 0, numa_nodes = 0, cores = 0, pus = 0;
  std::string describe() const;  // "1 package, 1 NUMA node, 2 cores, 2 PUs"
};
const MachineCounts& machine_counts();

// The rank's share of its node's caches (collective over comm).
struct RankCacheShare {
  std::size_t llc_bytes = 0;      // one instance of the last-level cache (0 unknown)
  int node_ranks = 1;             // ranks of comm on this node (shared memory)
  int llc_ranks = 1;              // of those, ranks sharing this rank's LLC instance
  std::size_t private_bytes = 0;  // the private levels below the LLC (e.g. L2 + L1d)
  std::size_t share_bytes() const { return llc_bytes / static_cast<std::size_t>(llc_ranks) + private_bytes; }
};
RankCacheShare rank_cache_share(MPI_Comm comm);

// Copy-probe sizing: each of the probe's two arrays is 4x the rank's cache share, at least
// kCopyArrayMin and at most kCopyArrayMax (so the probe never holds more than 2 x kCopyArrayMax
// per rank). When the cap keeps an array below the share the probe flushes it from the cache
// before each timed copy, so it still reads memory (core/measure/membw.cpp).
inline constexpr std::size_t kCopyArrayMin = std::size_t(16) << 20;
inline constexpr std::size_t kCopyArrayMax = std::size_t(64) << 20;
std::size_t copy_probe_array_bytes(const RankCacheShare& share);

}  // namespace sp
