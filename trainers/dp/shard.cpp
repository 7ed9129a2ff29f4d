#include "trainers/dp/shard.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include "core/run/error.hpp"

namespace sp::dp {

ParameterShard ParameterShard::whole(std::size_t numel) {
  ParameterShard s;
  s.ranges_.push_back({0, numel, 0});
  s.state_numel_ = s.total_ = numel;
  return s;
}

ParameterShard::ParameterShard(std::vector<BucketSlice> buckets, int nranks, int rank, MPI_Comm comm)
    : sharded_(true), nranks_(nranks), comm_(comm), buckets_(std::move(buckets)) {
  const std::size_t p = std::size_t(nranks);
  std::size_t carried = 0;  // where this bucket's larger blocks start: after the previous ones'
  for (const BucketSlice& b : buckets_) {
    first_larger_.push_back(carried % p);
    carried += b.numel % p;
    total_ += b.numel;
  }
  ranges_ = ranges_of(buckets_, first_larger_, nranks, rank);
  for (const ShardRange& r : ranges_) state_numel_ += r.numel;
}

std::vector<ShardRange> ParameterShard::ranges_of(const std::vector<BucketSlice>& buckets,
                                                  const std::vector<std::size_t>& first, int nranks, int rank) {
  std::vector<ShardRange> out;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const coll::Blocks b{buckets[i].numel, std::size_t(nranks), first[i]};
    const std::size_t r = std::size_t(rank);
    if (b.size(r) > 0) out.push_back({buckets[i].offset + b.begin(r), b.size(r), 0});
  }
  // Ascending in the buffer, the state packed in that order.
  std::sort(out.begin(), out.end(), [](const ShardRange& a, const ShardRange& b) { return a.offset < b.offset; });
  std::size_t state = 0;
  for (ShardRange& r : out) r.state_offset = state, state += r.numel;
  return out;
}

coll::Blocks ParameterShard::blocks(std::size_t bucket) const {
  if (!sharded_) return coll::Blocks{total_, 1, 0};
  return coll::Blocks{buckets_.at(bucket).numel, static_cast<std::size_t>(nranks_), first_larger_.at(bucket)};
}

double ParameterShard::sum_over_ranks(double local) const {
  if (!sharded_ || nranks_ == 1) return local;
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &local, 1, MPI_DOUBLE, MPI_SUM, comm_));
  return local;
}

void ParameterShard::take(const float* full, float* state) const {
  for (const ShardRange& r : ranges_) std::copy(full + r.offset, full + r.offset + r.numel, state + r.state_offset);
}

void ParameterShard::gather(const float* state, float* full) const {
  if (!sharded_) {
    std::copy(state, state + state_numel_, full);
    return;
  }
  int rank = 0;
  SP_MPI_CHECK(MPI_Comm_rank(comm_, &rank));
  std::vector<std::vector<ShardRange>> of(static_cast<std::size_t>(nranks_));
  std::vector<int> counts(static_cast<std::size_t>(nranks_)), displs(static_cast<std::size_t>(nranks_));
  std::size_t at = 0;
  for (int q = 0; q < nranks_; ++q) {
    of[std::size_t(q)] = ranges_of(buckets_, first_larger_, nranks_, q);
    std::size_t n = 0;
    for (const ShardRange& r : of[std::size_t(q)]) n += r.numel;
    if (n > std::size_t(INT_MAX) || at > std::size_t(INT_MAX))
      fail("checkpoint gather: a shard of {} elements is too large", n);
    counts[std::size_t(q)] = int(n);
    displs[std::size_t(q)] = int(at);
    at += n;
  }
  std::vector<float> all(rank == 0 ? at : 0);
  SP_MPI_CHECK(
      MPI_Gatherv(state, int(state_numel_), MPI_FLOAT, all.data(), counts.data(), displs.data(), MPI_FLOAT, 0, comm_));
  if (rank != 0) return;
  for (int q = 0; q < nranks_; ++q)
    for (const ShardRange& r : of[std::size_t(q)])
      std::copy_n(all.data() + displs[std::size_t(q)] + r.state_offset, r.numel, full + r.offset);
}

namespace {

std::uintptr_t page_size() {
  static const std::uintptr_t size = std::uintptr_t(sysconf(_SC_PAGESIZE));
  return size;
}

// The whole pages inside [begin, end): [first, last) rounded inwards.
std::pair<std::uintptr_t, std::uintptr_t> whole_pages(const float* begin, std::size_t n) {
  const std::uintptr_t page = page_size(), a = std::uintptr_t(begin), b = std::uintptr_t(begin + n);
  const std::uintptr_t first = (a + page - 1) / page * page, last = b / page * page;
  return {first, std::max(first, last)};
}

}  // namespace

void release_pages(float* begin, std::size_t n) {
  const auto [first, last] = whole_pages(begin, n);
  if (last > first && madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED) != 0)
    fail("--shard gradients: madvise(MADV_DONTNEED) on {} bytes of the gradient buffer failed", last - first);
}

void release_to_zeros(float* begin, std::size_t n) {
  const auto [first, last] = whole_pages(begin, n);
  if (last == first) {
    std::fill(begin, begin + n, 0.0f);
    return;
  }
  release_pages(begin, n);
  std::fill(begin, reinterpret_cast<float*>(first), 0.0f);
  std::fill(reinterpret_cast<float*>(last), begin + n, 0.0f);
}

std::size_t resident_bytes(const float* begin, std::size_t n) {
  if (n == 0) return 0;
  const std::uintptr_t page = page_size();
  const std::uintptr_t first = std::uintptr_t(begin) / page * page, end = std::uintptr_t(begin + n);
  std::vector<unsigned char> in_core((end - first + page - 1) / page);
  if (mincore(reinterpret_cast<void*>(first), end - first, in_core.data()) != 0)
    fail("mincore on {} bytes of the gradient buffer failed", end - first);
  std::size_t pages = 0;
  for (unsigned char c : in_core) pages += c & 1;
  return pages * page;
}

}  // namespace sp::dp
