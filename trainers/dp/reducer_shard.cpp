// The GradientReducer's --shard parts (reducer.hpp, shard.hpp): each bucket's ring reduce-scatter
// into this rank's block and the parameters' ring all-gathers, blocking after the update or
// overlapped with the next forward.
#include <algorithm>

#include "core/run/error.hpp"
#include "trainers/dp/reducer.hpp"

namespace sp::dp {

// --shard: ring reduce-scatter of each bucket into this rank's block, and the parameters' ring
// all-gather, with the shard's uneven blocks; the programs are written here rather than through
// the algorithm's placement, which knows only whole messages.
void GradientReducer::configure_sharded(const coll::Algorithm& algorithm) {
  if (algorithm.name != "ring" || through_arena_)
    fail("GradientReducer: --shard runs the ring only, not {}", algorithm.name);
  if (shard_->buckets().size() != buckets_.size())
    fail("GradientReducer: the shard has {} buckets, the configured cap {}", shard_->buckets().size(), buckets_.size());
  transport_ = &transports_.for_algorithm(algorithm);
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    coll::Shape shape{.count = buckets_[i].numel,
                      .rank = transport_->rank(),
                      .nranks = transport_->size(),
                      .chunk_bytes = chunk_bytes_,
                      .in_place = true,
                      .tag_offset = coll::tag::kTagStride * int(i % kInFlight),
                      .scaled = true,
                      .collective = coll::Collective::reduce_scatter,
                      .first_larger_block = shard_->blocks(i).first_larger};
    programs_.push_back(coll::plan_ring_reduce_scatter(shape));
    shape.collective = coll::Collective::all_gather;
    shape.scaled = false;
    gather_programs_.push_back(coll::plan_ring_all_gather(shape));
  }
  if (overlap_choice_.mode == OverlapMode::progress && !transport_->can_progress())
    fail("the {} transport cannot run {} in progress mode", transport_->name(), algorithm.name);
}

std::size_t GradientReducer::own_offset(std::size_t i) const {
  return buckets_[i].offset + shard_->blocks(i).begin(std::size_t(transport_->rank()));
}

std::size_t GradientReducer::own_size(std::size_t i) const {
  return shard_->blocks(i).size(std::size_t(transport_->rank()));
}

void GradientReducer::gather_parameters(float* params) {
  if (!shard_ || in_step_ || gathering()) fail("GradientReducer::gather_parameters without --shard or inside a step");
  for (std::size_t i = 0; i < gather_programs_.size(); ++i) {
    const coll::Program& p = gather_programs_[i];
    coll::run_blocking(p, workspace_.bind(p, params + own_offset(i), params + buckets_[i].offset, *transport_),
                       *transport_);
  }
}

void GradientReducer::start_gathers(float* params) {
  if (!shard_ || in_step_ || gathering()) fail("GradientReducer::start_gathers without --shard or inside a step");
  if (!can_overlap_gathers()) fail("the {} transport cannot overlap the all-gathers", transport_->name());
  gather_params_ = params;
  gathers_started_ = gathered_ = 0;
  gather_until(0);
}

void GradientReducer::start_gather(std::size_t k) {
  const std::size_t i = buckets_.size() - 1 - k;
  const coll::Program& p = gather_programs_[i];
  coll::Workspace& ws = slot_workspace_[i % kInFlight];  // consecutive buckets: other slots and tags
  runs_[i % kInFlight].start(
      p, ws.bind(p, gather_params_ + own_offset(i), gather_params_ + buckets_[i].offset, *transport_), *transport_);
}

void GradientReducer::gather_until(std::size_t end) {
  if (!gathering()) return;
  const std::size_t n = buckets_.size();
  auto run_of = [&](std::size_t k) -> coll::ProgressedRun& { return runs_[(n - 1 - k) % kInFlight]; };
  for (;;) {
    while (gathers_started_ < n && gathers_started_ < gathered_ + kInFlight) start_gather(gathers_started_++);
    for (std::size_t k = gathered_; k < gathers_started_; ++k)
      if (!run_of(k).done()) run_of(k).advance();
    while (gathered_ < gathers_started_ && run_of(gathered_).done()) ++gathered_;
    if (gathered_ == n) {
      gather_params_ = nullptr;
      return;
    }
    // Done when the next bucket to complete (the lowest offsets left) is not needed yet and
    // every free slot has a gather posted and advanced once.
    const bool window_full = gathers_started_ == std::min(n, gathered_ + kInFlight);
    if (buckets_[n - 1 - gathered_].offset >= end && window_full) return;
  }
}

}  // namespace sp::dp
