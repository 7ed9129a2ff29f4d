#include "core/measure/topology.hpp"

#include <fmt/format.h>
#include <hwloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "core/run/program.hpp"
#include "core/run/sizes.hpp"

namespace sp {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

// The loaded hwloc topology of this machine, or null if hwloc could not read it.
hwloc_topology* hwloc_machine() {
  static TopologyPtr topo = [] {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) return TopologyPtr();
    TopologyPtr owned(t);
    if (hwloc_topology_load(t) != 0) return TopologyPtr();
    return owned;
  }();
  return topo.get();
}

constexpr hwloc_obj_type_t kCacheTypes[] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE,
                                            HWLOC_OBJ_L5CACHE};

CacheTopology read_topology() {
  CacheTopology t;
  hwloc_topology* topo = hwloc_machine();
  if (topo) {
    t.source = "hwloc";
    for (hwloc_obj_type_t type : kCacheTypes) {
      int n = hwloc_get_nbobjs_by_type(topo, type);
      if (n <= 0) continue;
      hwloc_obj_t obj = hwloc_get_obj_by_type(topo, type, 0);
      CacheLevel c;
      c.level = static_cast<int>(obj->attr->cache.depth);
      c.type = obj->attr->cache.type == HWLOC_OBJ_CACHE_DATA ? "data" : "unified";
      c.bytes = static_cast<std::size_t>(obj->attr->cache.size);
      c.instances = n;
      c.pus_per_instance = std::max(1, hwloc_bitmap_weight(obj->cpuset));
      if (obj->attr->cache.linesize > 0) t.line_bytes = obj->attr->cache.linesize;
      t.levels.push_back(c);
    }
  } else {
    t.source = "unknown (hwloc could not load the topology)";
  }
  if (const char* v = std::getenv("SCALEPROBE_LLC_BYTES"); v && *v) {
    std::size_t bytes = 0;
    try {
      bytes = parse_size(v);
    } catch (const Error& e) {
      throw UsageError(fmt::format("SCALEPROBE_LLC_BYTES='{}': {}", v, e.what()));
    }
    if (bytes == 0) throw UsageError("SCALEPROBE_LLC_BYTES must be at least 1 byte");
    if (t.levels.empty()) {
      int cpus = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
      t.levels.push_back({3, "unified", bytes, 1, cpus});
    }
    t.levels.back().bytes = bytes;
    t.source += " + SCALEPROBE_LLC_BYTES";
  }
  return t;
}

// Index of the last-level cache instance this process is bound inside, -1 if it may run on
// cores under several instances (unbound) or the binding is unknown.
int bound_llc_instance() {
  hwloc_topology* topo = hwloc_machine();
  const CacheLevel* llc = cache_topology().last_level();
  if (!topo || !llc) return -1;
  hwloc_obj_type_t type = kCacheTypes[std::clamp(llc->level, 1, 5) - 1];
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  int found = -1, hits = 0;
  if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0) {
    for (int i = 0; i < hwloc_get_nbobjs_by_type(topo, type); ++i) {
      if (hwloc_bitmap_intersects(hwloc_get_obj_by_type(topo, type, i)->cpuset, set)) {
        found = i;
        ++hits;
      }
    }
  }
  hwloc_bitmap_free(set);
  return hits == 1 ? found : -1;
}

}  // namespace

std::string CacheTopology::describe() const {
  if (levels.empty()) return "unknown";
  std::string out;
  for (const CacheLevel& c : levels) {
    out += fmt::format("{}L{}{} {} x{} ({} PU{} each)", out.empty() ? "" : "; ", c.level, c.type == "data" ? "d" : "",
                       format_size(c.bytes), c.instances, c.pus_per_instance, c.pus_per_instance == 1 ? "" : "s");
  }
  return out + fmt::format("; line {} B; source {}", line_bytes, source);
}

const CacheTopology& cache_topology() {
  static const CacheTopology t = read_topology();
  return t;
}

std::size_t core_private_cache_bytes() {
  const std::vector<CacheLevel>& levels = cache_topology().levels;
  std::size_t bytes = 0;
  for (std::size_t i = 0; i + 1 < levels.size(); ++i) bytes += levels[i].bytes;
  return bytes;
}

const MachineCounts& machine_counts() {
  static const MachineCounts counts = [] {
    MachineCounts c;
    if (hwloc_topology* topo = hwloc_machine()) {
      auto count = [&](hwloc_obj_type_t t) { return std::max(0, hwloc_get_nbobjs_by_type(topo, t)); };
      c.packages = count(HWLOC_OBJ_PACKAGE);
      c.numa_nodes = count(HWLOC_OBJ_NUMANODE);
      c.cores = count(HWLOC_OBJ_CORE);
      c.pus = count(HWLOC_OBJ_PU);
    }
    return c;
  }();
  return counts;
}

std::string MachineCounts::describe() const {
  auto n = [](int v, const char* what) { return fmt::format("{} {}{}", v, what, v == 1 ? "" : "s"); };
  return fmt::format("{}, {}, {}, {}", n(packages, "package"), n(numa_nodes, "NUMA node"), n(cores, "core"),
                     n(pus, "PU"));
}

RankCacheShare rank_cache_share(MPI_Comm comm) {
  RankCacheShare s;
  const CacheTopology& topo = cache_topology();
  const CacheLevel* llc = topo.last_level();
  MPI_Comm node = MPI_COMM_NULL;
  int rank = 0;
  SP_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  SP_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  SP_MPI_CHECK(MPI_Comm_size(node, &s.node_ranks));
  int mine = bound_llc_instance();
  std::vector<int> all(static_cast<std::size_t>(s.node_ranks));
  SP_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, node));
  MPI_Comm_free(&node);
  if (!llc) return s;
  s.llc_bytes = llc->bytes;
  if (mine >= 0) {
    s.llc_ranks = static_cast<int>(std::count(all.begin(), all.end(), mine));
  } else {
    // Unbound: assume the node's ranks spread evenly over the instances.
    s.llc_ranks = (s.node_ranks + llc->instances - 1) / std::max(1, llc->instances);
  }
  s.llc_ranks = std::max(1, s.llc_ranks);
  s.private_bytes = core_private_cache_bytes();
  return s;
}

std::size_t copy_probe_array_bytes(const RankCacheShare& share) {
  std::size_t want = share.llc_bytes == 0 ? kCopyArrayMax : 4 * share.share_bytes();
  std::size_t bytes = std::clamp(want, kCopyArrayMin, kCopyArrayMax);
  return bytes / 4096 * 4096;
}

}  // namespace sp
