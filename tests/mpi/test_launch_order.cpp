// The order in which the NCCL transport starts each schedule's sends and receives
// (collectives/transports/gpu/grouped_posts.hpp) cannot deadlock on NCCL's streams. Checked without a GPU:
// every schedule runs on MPI (so it runs to its end) through a transport that records the groups
// NCCL would have been given; rank 0 then plays those groups the way NCCL runs them (each rank's
// groups one after the other; a send completes only while the peer's matching receive is running)
// and fails if any rank is left waiting. The same player finds the deadlock of starting every post
// at once, so the check can fail.
#include <gtest/gtest.h>
#include <mpi.h>

#include <fmt/format.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "collectives/algorithms/allreduce.hpp"
#include "collectives/transports/gpu/grouped_posts.hpp"

namespace sp::coll {
namespace {

struct StartedOp {
  bool is_send;
  int peer;
};
using Groups = std::vector<std::vector<StartedOp>>;  // one rank's groups, in the order started

enum class Rule { held, at_once };

// Moves data with MPI and records the groups an NCCL transport following `rule` would start.
class RecordingTransport final : public Transport {
 public:
  RecordingTransport(Transport& mpi, Rule rule) : mpi_(mpi), rule_(rule) {}
  Groups groups;

  std::string_view name() const override { return "recording"; }
  int rank() const override { return mpi_.rank(); }
  int size() const override { return mpi_.size(); }
  std::string describe() const override { return "test double"; }
  Request post_send(const void* data, std::size_t count, Dtype d, int peer, int tag) override {
    return hold(mpi_.post_send(data, count, d, peer, tag), true, peer, count);
  }
  Request post_recv(void* data, std::size_t count, Dtype d, int peer, int tag) override {
    return hold(mpi_.post_recv(data, count, d, peer, tag), false, peer, count);
  }
  void wait(Request& r) override {
    if (!r.pending()) return;
    if (rule_ == Rule::held) record(posts_.take_for_wait(r.slot));
    mpi_.wait(real_.at(r.slot));
    real_.erase(r.slot);
    r = Request{};
  }
  void library_allreduce(const void* s, void* r, std::size_t n, Dtype d, Op o) override {
    mpi_.library_allreduce(s, r, n, d, o);
  }
  void synchronize() override {
    record(posts_.take_all());
    for (Request& r : empty_) mpi_.wait(r);
    empty_.clear();
  }

 private:
  Request hold(Request real, bool is_send, int peer, std::size_t count) {
    if (count == 0) {  // as the NCCL transport: an empty message is not posted (MPI completes it at the end)
      empty_.push_back(real);
      return {};
    }
    const int id = posts_.post({is_send, peer, 0, nullptr, count, 0});
    real_[id] = real;
    if (rule_ == Rule::at_once) record(posts_.take_for_wait(id));
    return Request{id};
  }
  void record(const std::vector<gpu::PostedOp>& group) {
    if (group.empty()) return;
    groups.emplace_back();
    for (const gpu::PostedOp& op : group) groups.back().push_back({op.is_send, op.peer});
  }

  Transport& mpi_;
  Rule rule_;
  gpu::GroupedPosts posts_;
  std::map<int, Request> real_;
  std::vector<Request> empty_;
};

// Every rank's groups at rank 0 (a group travels as its size, then is_send and peer per op).
std::vector<Groups> gather_groups(const Groups& mine, int p) {
  std::vector<int> flat;
  for (const auto& g : mine) {
    flat.push_back(static_cast<int>(g.size()));
    for (const StartedOp& op : g) flat.insert(flat.end(), {op.is_send ? 1 : 0, op.peer});
  }
  int n = static_cast<int>(flat.size());
  std::vector<int> sizes(p), offsets(p);
  MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < p; ++r) offsets[r] = std::exchange(total, total + sizes[r]);
  std::vector<int> all(std::max(total, 1));
  MPI_Gatherv(flat.data(), n, MPI_INT, all.data(), sizes.data(), offsets.data(), MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<Groups> groups(p);
  for (int r = 0; r < p; ++r)
    for (int i = offsets[r]; i < offsets[r] + sizes[r];) {
      auto& g = groups[r].emplace_back();
      for (int k = all[i++]; k > 0; --k, i += 2) g.push_back({all[i] == 1, all[i + 1]});
    }
  return groups;
}

// Plays the groups as NCCL runs them. Returns "" when every rank finishes, else who is stuck.
std::string play(const std::vector<Groups>& groups) {
  const int p = static_cast<int>(groups.size());
  // An op's place: (rank, group, index in group); its match: the same ordinal among the sends from
  // a to b and the receives at b from a.
  struct Place {
    int group, index;
  };
  std::map<std::tuple<int, int, bool, int>, Place> by_ordinal;  // (rank, peer, is_send, ordinal)
  std::vector<std::vector<std::vector<int>>> ordinal(p);
  for (int r = 0; r < p; ++r) {
    std::map<std::pair<int, bool>, int> seen;
    for (int g = 0; g < static_cast<int>(groups[r].size()); ++g) {
      ordinal[r].emplace_back();
      for (int i = 0; i < static_cast<int>(groups[r][g].size()); ++i) {
        const StartedOp& op = groups[r][g][i];
        const int k = seen[{op.peer, op.is_send}]++;
        ordinal[r][g].push_back(k);
        by_ordinal[{r, op.peer, op.is_send, k}] = {g, i};
      }
    }
  }
  std::vector<std::vector<std::vector<bool>>> done(p);
  for (int r = 0; r < p; ++r)
    for (const auto& g : groups[r]) done[r].emplace_back(g.size(), false);
  std::vector<int> running(p, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      const int g = running[r];
      if (g >= static_cast<int>(groups[r].size())) continue;
      bool all = true;
      for (int i = 0; i < static_cast<int>(groups[r][g].size()); ++i) {
        if (done[r][g][i]) continue;
        const StartedOp& op = groups[r][g][i];
        const auto match = by_ordinal.find({op.peer, r, !op.is_send, ordinal[r][g][i]});
        if (match != by_ordinal.end() && match->second.group == running[op.peer]) {
          done[r][g][i] = done[op.peer][match->second.group][match->second.index] = true;
          progress = true;
        } else {
          all = false;
        }
      }
      if (all) {
        ++running[r];
        progress = true;
      }
    }
  }
  std::string stuck;
  for (int r = 0; r < p; ++r)
    if (running[r] < static_cast<int>(groups[r].size()))
      stuck +=
          fmt::format("{}rank {} in group {} of {}", stuck.empty() ? "" : ", ", r, running[r] + 1, groups[r].size());
  return stuck;
}

// Runs algorithm a on every rank through a recording transport; rank 0 plays the groups.
std::string deadlock_of(const Algorithm& a, Rule rule, std::size_t count, std::size_t chunk_bytes) {
  static const std::unique_ptr<Transport> mpi = make_mpi_transport(MPI_COMM_WORLD);
  RecordingTransport t(*mpi, rule);
  std::vector<float> send(count, 1.0f), recv(count);
  Workspace ws;
  a.run({send.data(), recv.data(), count, Dtype::f32, Op::sum, &t, &ws, chunk_bytes});
  t.synchronize();
  const std::vector<Groups> all = gather_groups(t.groups, mpi->size());
  int verdict_length = 0;
  std::string verdict = mpi->rank() == 0 ? play(all) : "";
  verdict_length = static_cast<int>(verdict.size());
  MPI_Bcast(&verdict_length, 1, MPI_INT, 0, MPI_COMM_WORLD);
  verdict.resize(verdict_length);
  MPI_Bcast(verdict.data(), verdict_length, MPI_CHAR, 0, MPI_COMM_WORLD);
  return verdict;
}

TEST(NcclLaunchOrder, EverySchedulePlaysToTheEnd) {
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  for (const Algorithm& a : algorithms()) {
    if (!a.is_schedule()) continue;  // the libraries' own allreduces and the node-local ones post nothing
    // One segment, a few, many; blocks smaller than a segment and empty blocks (count < ranks).
    for (std::size_t count : {std::size_t(1), std::size_t(p), std::size_t(1000), std::size_t(20000)})
      for (std::size_t chunk : {std::size_t(64), std::size_t(4096), std::size_t(1) << 20}) {
        const std::string stuck = deadlock_of(a, Rule::held, count, chunk);
        EXPECT_EQ(stuck, "") << fmt::format("{} at {} ranks, {} floats, chunk {} B: deadlock: {}", a.name, p, count,
                                            chunk, stuck);
      }
  }
}

// Starting every post at once deadlocks the pipelined ring (each rank's receive of segment k+1
// queued before its send of segment k): the player sees it. One rank posts nothing: no deadlock.
TEST(NcclLaunchOrder, StartingEveryPostAtOnceDeadlocksTheRing) {
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const std::string stuck = deadlock_of(find_algorithm("ring"), Rule::at_once, 1000 * static_cast<std::size_t>(p), 64);
  EXPECT_EQ(stuck.empty(), p == 1) << stuck;
}

}  // namespace
}  // namespace sp::coll
