// When a stream-ordered library (NCCL) may start the sends and receives a schedule posts. Plain C++
// (no CUDA), so the rule is tested on machines without a GPU (test_nccl_launch_order).
//
// NCCL runs each group of point-to-point calls as one kernel on the rank's stream, after the
// previous one has finished, and a send completes only when the peer's matching receive runs:
// starting a post at once can deadlock. Ring posts the receive of segment k+1 before it sends
// segment k; if that receive ran first, every rank would wait for a send queued behind it on its
// neighbour. So posts are held back, and waiting for one starts, as one group, every held send
// (sends only help the peers progress) and the held receives posted up to and including the one
// waited for (a prefix, so receives from one peer keep their order). A receive nobody waited for
// yet stays held.
#pragma once
#include <cstddef>
#include <vector>

namespace sp::coll::gpu {

struct PostedOp {
  bool is_send = false;
  int peer = 0;
  int id = 0;                  // the Request slot the post returned
  const void* data = nullptr;  // what the library needs to start it
  std::size_t count = 0;
  int dtype = 0;
};

class GroupedPosts {
 public:
  // Holds op and returns its id (a non-negative Request slot).
  int post(PostedOp op);
  // The ops to start as one group for a wait on id, in posting order; empty when id has started.
  std::vector<PostedOp> take_for_wait(int id);
  // Every held op, in posting order (before the library waits for everything).
  std::vector<PostedOp> take_all();
  bool empty() const { return held_.empty(); }

 private:
  std::vector<PostedOp> held_;
  int next_id_ = 0;
};

}  // namespace sp::coll::gpu
