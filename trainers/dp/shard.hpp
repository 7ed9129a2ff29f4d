// --shard optimizer (ZeRO stage 1, as FSDP cuts its units): each gradient bucket is reduce-scattered
// instead of allreduced, each rank keeps the optimizer state of its blocks only and updates those
// parameters, and every bucket's parameters are then all-gathered (ring reduce-scatter and
// all-gather, collectives/algorithms/ring_halves.cpp, in place in the trainer's flat buffers).
// --shard gradients (ZeRO stage 2) also gives the gradient memory back as soon as it is dead: once
// a bucket is reduce-scattered, the pages of the other ranks' blocks (release_pages); after the
// update, the whole buffer. Released pages read as zeros, which is what the next backward, adding
// into the buffer, needs; they take memory again only when backward writes them.
//
// Which elements a rank owns: bucket i of n_i elements is cut as Blocks{n_i, ranks, c_i}
// (collectives/algorithms/blocks.hpp), rank r owning block r. The n_i % ranks larger blocks of each bucket
// start where the previous bucket's left off (c_i = sum_{k<i} n_k % ranks, mod ranks), so over the
// whole buffer of P elements every rank owns floor(P/ranks) or ceil(P/ranks): the optimizer state
// per rank is ceil(P/ranks) elements per state vector at most, whatever the bucket cap.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

#include "collectives/algorithms/blocks.hpp"
#include "trainers/dp/bucket_slice.hpp"

namespace sp::dp {

// A run of this rank's elements: [offset, offset + numel) of the flat buffers, whose optimizer
// state is at [state_offset, state_offset + numel) of this rank's (compact) state vectors.
struct ShardRange {
  std::size_t offset = 0;
  std::size_t numel = 0;
  std::size_t state_offset = 0;
};

class ParameterShard {
 public:
  // Not sharded: the whole buffer of numel elements is this rank's, state laid out as the buffer.
  static ParameterShard whole(std::size_t numel);
  // Rank `rank`'s share of the buckets among nranks (see above). comm: the ranks' communicator,
  // for sums over the shards (gradient norms) and the checkpoint's gathers.
  ParameterShard(std::vector<BucketSlice> buckets, int nranks, int rank, MPI_Comm comm);

  bool sharded() const { return sharded_; }
  const std::vector<ShardRange>& ranges() const { return ranges_; }
  std::size_t state_numel() const { return state_numel_; }  // per state vector, this rank
  std::size_t total_numel() const { return total_; }        // the whole buffer
  // Bucket i's blocks (its first_larger_block for the programs).
  coll::Blocks blocks(std::size_t bucket) const;
  const std::vector<BucketSlice>& buckets() const { return buckets_; }

  // Sum of a value over the ranks (collective when sharded; the value itself otherwise).
  double sum_over_ranks(double local) const;
  // For checkpoints. gather: every rank's state vector (state_numel floats) into full (total_numel
  // floats, buffer layout) on rank 0 (collective; full is only written on rank 0). take: this
  // rank's part of a full vector into state.
  void gather(const float* state, float* full) const;
  void take(const float* full, float* state) const;

  // Calls fn(tensor, offset, state_offset, numel) for each piece of this rank's ranges, cut where
  // tensors begin. tensor_begin: each tensor's first element, ascending, the first 0.
  template <class Fn>
  void for_each_piece(const std::vector<std::size_t>& tensor_begin, Fn&& fn) const {
    std::size_t t = 0;
    for (const ShardRange& r : ranges_) {
      std::size_t o = r.offset;
      const std::size_t end = r.offset + r.numel;
      while (o < end) {
        while (t + 1 < tensor_begin.size() && tensor_begin[t + 1] <= o) ++t;
        const std::size_t piece_end = t + 1 < tensor_begin.size() ? std::min(end, tensor_begin[t + 1]) : end;
        fn(t, o, r.state_offset + (o - r.offset), piece_end - o);
        o = piece_end;
      }
    }
  }

 private:
  ParameterShard() = default;
  static std::vector<ShardRange> ranges_of(const std::vector<BucketSlice>& buckets,
                                           const std::vector<std::size_t>& first, int nranks, int rank);
  bool sharded_ = false;
  int nranks_ = 1;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<BucketSlice> buckets_;
  std::vector<std::size_t> first_larger_;  // per bucket
  std::vector<ShardRange> ranges_;
  std::size_t state_numel_ = 0, total_ = 0;
};

// Gives the whole memory pages inside [begin, begin + n) back to the operating system
// (madvise(MADV_DONTNEED) on the process's private anonymous memory: they read as zeros afterwards);
// partial pages at either end keep their contents.
void release_pages(float* begin, std::size_t n);
// [begin, begin + n) made zero by releasing its whole pages and writing zeros into the partial ones.
void release_to_zeros(float* begin, std::size_t n);
// Bytes of [begin, begin + n) resident in memory (mincore), in whole pages.
std::size_t resident_bytes(const float* begin, std::size_t n);

}  // namespace sp::dp
