#include "collectives/transports/gpu/grouped_posts.hpp"

#include <algorithm>
#include <climits>

namespace sp::coll::gpu {

int GroupedPosts::post(PostedOp op) {
  op.id = next_id_;
  next_id_ = next_id_ == INT_MAX ? 0 : next_id_ + 1;  // ids of held ops never collide: few are held
  held_.push_back(op);
  return op.id;
}

std::vector<PostedOp> GroupedPosts::take_for_wait(int id) {
  const auto waited = std::find_if(held_.begin(), held_.end(), [&](const PostedOp& o) { return o.id == id; });
  if (waited == held_.end()) return {};
  std::vector<PostedOp> group, kept;
  for (auto it = held_.begin(); it != held_.end(); ++it) (it->is_send || it <= waited ? group : kept).push_back(*it);
  held_ = std::move(kept);
  return group;
}

std::vector<PostedOp> GroupedPosts::take_all() {
  std::vector<PostedOp> all;
  all.swap(held_);
  return all;
}

}  // namespace sp::coll::gpu
