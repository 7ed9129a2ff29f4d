// The shared memory of the ranks on one node, for the node-local allreduce (shm.cpp): one POSIX
// shared-memory segment mapped by every local rank, each rank owning one part — its counters (one
// per channel and a mark, each on its own cache lines), its staging slots, then its arena: buffers
// the caller places in shared memory (the zero-copy placement), allocated symmetrically — every
// local rank allocates the same sizes in the same order, so a buffer sits at the same offset in
// every rank's arena and a program finds a peer's copy of it (peer_address). Programs (program.hpp)
// read and write any local rank's part through segment spans and synchronise through the counters
// (signal / wait_signals): no MPI call after set-up.
//
// Set-up is collective over the communicator (MPI is used there only): the local ranks are the
// ranks of one shared-memory domain (MPI_COMM_TYPE_SHARED) with the same node key — the integer
// in SCALEPROBE_NODE_KEY, else SLURM_NODEID, else 0 — so the local SLURM cluster's virtual nodes,
// which share one host's memory, and tests that split one host into nodes count as nodes. Every
// rank of the communicator must be local, or every rank fails with one line. Rank 0 of the node creates the segment and
// reserves its pages (posix_fallocate: a /dev/shm too small is one line naming the bytes needed, not a SIGBUS mid-run),
// the others map it, and it is unlinked at once: a job killed after that leaves nothing behind. Segments whose creator
// died before unlinking (named after job, host and pid) are removed by the next creation on that host.
#pragma once
#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collectives/transports/transport.hpp"

namespace sp::coll {

class NodeSegment {
 public:
  // Staging bytes per rank: two slots of the largest pipelining segment shm uses. 256 KiB: a chunk,
  // its input and its output stay in a core's L2 (1 MiB slots were 2x slower at 1 MiB messages on
  // 2 ranks here: results/2026-11-26-vm-f26m2-shm-chunks).
  static constexpr std::size_t kSlotBytes = std::size_t(256) << 10;
  static constexpr std::size_t kSlots = 2;
  static constexpr std::size_t kCounterBytes = 128;  // a channel's counter, alone on its cache lines

  // Collective over comm; every rank gets one (or every rank throws one CollectiveError), with an
  // arena of arena_bytes per rank. Without rail the ranks must be on one node; with it they may span
  // nodes with the same number of ranks each (else one line naming the counts), and *rail is set to
  // a new communicator (the caller frees it) of the ranks with this one's local rank, one per node.
  // channels: runs that may be in flight at once (the data-parallel engine's buckets), each with
  // its own counter and staging slots.
  static std::unique_ptr<NodeSegment> create(MPI_Comm comm, std::size_t arena_bytes = 0, MPI_Comm* rail = nullptr,
                                             int channels = 1);
  ~NodeSegment();
  NodeSegment(const NodeSegment&) = delete;
  NodeSegment& operator=(const NodeSegment&) = delete;

  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  int channels() const { return channels_; }
  // Local rank r's staging bytes of a channel (kSlots x kSlotBytes), in this process's mapping.
  std::byte* staging(int r, int channel) const {
    return base_ + std::size_t(r) * part_bytes_ + header_bytes() + std::size_t(channel) * kSlots * kSlotBytes;
  }
  std::size_t bytes_per_rank() const { return part_bytes_; }

  // The arena. allocate: bytes (64-byte aligned, zeroed) in this rank's arena, the same offset on
  // every rank that makes the same calls; sp::Error naming the sizes when it does not fit. Freed
  // with the buffer. Which local rank's copy of my arena address p (p must be in my arena).
  TransportBuffer allocate(std::size_t bytes);
  bool in_arena(const void* p, std::size_t bytes) const;
  std::byte* peer_address(const void* p, int r) const {
    return arena(r) + (static_cast<const std::byte*>(p) - arena(local_rank_));
  }

  // Progress counters, one per rank and channel. Each counts the signals the rank has given on the
  // channel; a program's k-th signal of a run sets it to base + k + 1, and a wait for that signal
  // waits until the counter reaches it.
  std::atomic<std::uint64_t>& counter(int r, int channel) const {
    return *reinterpret_cast<std::atomic<std::uint64_t>*>(base_ + std::size_t(r) * part_bytes_ +
                                                          std::size_t(channel) * kCounterBytes);
  }
  // A run of a program with n signals begins on a channel: its base (every rank runs the same
  // programs on a channel in the same order, so bases agree). One run at a time per channel.
  std::uint64_t begin_run(std::uint64_t n, int channel);
  void end_run(int channel) { running_[std::size_t(channel)] = false; }
  // Whether every local rank's counter of the channel has reached value (the wait of an executor).
  bool all_reached(std::uint64_t value, int channel) const;
  // Waits until it has: spins briefly, then yields the core (ranks may share cores).
  void wait_all(std::uint64_t value, int channel) const;
  void signal(std::uint64_t value, int channel) const {
    counter(local_rank_, channel).store(value, std::memory_order_release);
  }

  // A counter per local rank outside every channel, for a rendezvous of the caller's own that no
  // program's signals may disturb (the data-parallel engine: for how many steps this rank's
  // gradients have all been final). mark(v) sets this rank's to v (release); all_marked(v): every
  // local rank's has reached v.
  void mark(std::uint64_t value) const { mark_counter(local_rank_).store(value, std::memory_order_release); }
  bool all_marked(std::uint64_t value) const {
    for (int r = 0; r < local_size_; ++r)
      if (mark_counter(r).load(std::memory_order_acquire) < value) return false;
    return true;
  }

  // Where the segment lives and its name's prefix (tests of leftovers).
  static std::string directory();

 private:
  NodeSegment() = default;
  // The channels' counters, then the mark counter, each on its own cache lines.
  std::size_t header_bytes() const { return std::size_t(channels_ + 1) * kCounterBytes; }
  std::atomic<std::uint64_t>& mark_counter(int r) const {
    return *reinterpret_cast<std::atomic<std::uint64_t>*>(base_ + std::size_t(r) * part_bytes_ +
                                                          std::size_t(channels_) * kCounterBytes);
  }
  std::byte* arena(int r) const { return staging(r, channels_); }
  static void release(void* p) noexcept;
  std::byte* base_ = nullptr;
  std::size_t part_bytes_ = 0, map_bytes_ = 0, arena_bytes_ = 0;
  std::vector<std::pair<std::size_t, std::size_t>> used_;  // arena blocks (offset, bytes), by offset
  int local_rank_ = 0, local_size_ = 1, channels_ = 1;
  std::vector<std::uint64_t> signals_;  // per channel, given by this rank so far: the next run's base
  std::vector<bool> running_;           // per channel
};

// The node key of this process (see above); sp::Error naming the variable when it is not an integer.
int node_key();
// The nodes comm's ranks are on, as NodeSegment::create counts them, and the fewest and most ranks
// on one (collective; a bad node key is one UsageError on every rank).
struct NodeLayout {
  int nodes = 1, fewest = 1, most = 1;
};
NodeLayout node_layout(MPI_Comm comm);
inline int node_count(MPI_Comm comm) { return node_layout(comm).nodes; }

// Removes segments in dir named as this suite names them whose creating process (on this host) no
// longer exists; returns their names. A live job's segments are never touched.
std::vector<std::string> remove_orphaned_segments(const std::string& dir, const std::string& host);

}  // namespace sp::coll
