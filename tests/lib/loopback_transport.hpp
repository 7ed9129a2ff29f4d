// Ranks in one process, for tests of step programs without MPI: every rank's LoopbackTransport
// posts into one shared Fabric, and a message moves only when one of its two ends is tested — a
// transport that completes a request only when polled, as MPI without asynchronous progress. Its
// blocking wait fails instead of waiting (nothing else would run), so programs run on it through
// ProgressedRun, one rank after another.
#pragma once
#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "collectives/transports/transport.hpp"
#include "core/run/error.hpp"

namespace sp::coll::testing {

class Fabric {
 public:
  // A posted send or receive; returns its id.
  int post(bool is_send, int src, int dst, int tag, void* data, std::size_t bytes) {
    const int id = int(posts_.size());
    posts_.push_back({is_send, src, dst, tag, data, bytes});
    auto& [sends, recvs] = channels_[{src, dst, tag}];
    (is_send ? sends : recvs).push_back(id);
    return id;
  }
  // Completes post id if its partner (the same ordinal on the channel) is posted: copies the data.
  bool test(int id) {
    Post& p = posts_[std::size_t(id)];
    if (p.complete) return true;
    auto& [sends, recvs] = channels_[{p.src, p.dst, p.tag}];
    const std::vector<int>& mine = p.is_send ? sends : recvs;
    const std::vector<int>& theirs = p.is_send ? recvs : sends;
    const std::size_t ordinal = std::size_t(std::find(mine.begin(), mine.end(), id) - mine.begin());
    if (ordinal >= theirs.size()) return false;
    Post& q = posts_[std::size_t(theirs[ordinal])];
    const Post& send = p.is_send ? p : q;
    Post& recv = p.is_send ? q : p;
    if (send.bytes != recv.bytes)
      fail("loopback: rank {} sends {} bytes to rank {} (tag {:#x}), which receives {}", send.src, send.bytes, send.dst,
           send.tag, recv.bytes);
    if (send.bytes) std::memcpy(recv.data, send.data, send.bytes);
    p.complete = q.complete = true;
    ++completed_;
    return true;
  }
  std::size_t messages_completed() const { return completed_; }

 private:
  struct Post {
    bool is_send;
    int src, dst, tag;
    void* data;
    std::size_t bytes;
    bool complete = false;
  };
  std::vector<Post> posts_;
  std::map<std::tuple<int, int, int>, std::pair<std::vector<int>, std::vector<int>>> channels_;
  std::size_t completed_ = 0;
};

class LoopbackTransport final : public Transport {
 public:
  LoopbackTransport(Fabric& f, int rank, int size) : fabric_(f), rank_(rank), size_(size) {}
  std::string_view name() const override { return "loopback"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string describe() const override { return "ranks in one process (test double)"; }
  Request post_send(const void* data, std::size_t count, Dtype d, int peer, int tag) override {
    return {fabric_.post(true, rank_, peer, tag, const_cast<void*>(data), count * size_of(d))};
  }
  Request post_recv(void* data, std::size_t count, Dtype d, int peer, int tag) override {
    return {fabric_.post(false, peer, rank_, tag, data, count * size_of(d))};
  }
  bool can_progress() const override { return true; }
  bool test(Request& r) override {
    if (!r.pending()) return true;
    if (!fabric_.test(r.slot)) return false;
    r = Request{};
    return true;
  }
  void wait(Request& r) override {
    if (!test(r)) fail("loopback: rank {} would block (run programs on it through ProgressedRun)", rank_);
  }
  void library_allreduce(const void*, void*, std::size_t, Dtype, Op) override {
    fail("loopback: no library allreduce");
  }

 private:
  Fabric& fabric_;
  int rank_, size_;
};

}  // namespace sp::coll::testing
