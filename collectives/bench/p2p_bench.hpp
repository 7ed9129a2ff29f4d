// p2p_perf's cases and output: point-to-point latency, bandwidth and bidirectional bandwidth
// between rank pairs, by OSU's definitions (osu_latency, osu_bw, osu_bibw, osu_mbw_mr), on any
// transport. Ranks pair up as r and r + n/2 and every pair runs at once (one pair at 2 ranks), or
// (--pairs each) every pair of ranks runs alone, one after the other, while the others wait: a matrix
// of the links between ranks (as LLNL's mpiGraph), the statistics over the pair's two ranks.
//   latency: a ping-pong, one message each way; latency = half the round trip.
//   bw:      a window of W non-blocking sends one way, then a 4-byte acknowledgement back;
//            bandwidth = W x size / time, message rate = W / time, summed over the pairs.
//   bibw:    windows both ways at once; bandwidth = 2 W x size / time.
// Every message is whole i32 elements of the verification pattern. A window's messages land in one
// receive buffer, as OSU's do (like for like with osu_bw: the buffer stays in cache; overlapping
// receives in flight are outside the MPI standard's letter, and every library runs them), or with
// distinct slots each in its own (W x size of receive memory per rank, each checked).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/bench/driver.hpp"

namespace sp::coll {

enum class P2pTest { latency, bw, bibw };
std::string_view name(P2pTest t);
P2pTest parse_p2p_test(std::string_view text);  // sp::Error listing the choices

class P2pCase : public BenchCase {
 public:
  // first, second: the one pair that runs (--pairs each), or -1, -1 for every pair r, r + n/2 at once.
  P2pCase(P2pTest test, std::size_t bytes, int window, bool distinct_slots, Transport& t, int first = -1,
          int second = -1);
  Transport& transport() override { return t_; }
  void reset() override {}  // the send buffer is never written; the slots are overwritten whole
  std::uint64_t evict_from_cache() override;
  void call(int iter) override;
  long long verify() override;
  bool takes_part() const override { return active(); }

 private:
  bool one_pair() const { return first_ >= 0; }
  bool active() const { return !one_pair() || t_.rank() == first_ || t_.rank() == second_; }
  bool sender() const { return one_pair() ? t_.rank() == first_ : t_.rank() < t_.size() / 2; }
  int peer() const {
    if (one_pair()) return t_.rank() == first_ ? second_ : first_;
    return sender() ? t_.rank() + t_.size() / 2 : t_.rank() - t_.size() / 2;
  }
  void post_window_recvs();
  void post_window_sends();
  void wait_all();
  P2pTest test_;
  std::size_t count_;  // i32 elements per message
  int window_;
  int slots_count_;  // receive slots: 1, or the window
  Transport& t_;
  int first_, second_;
  TransportBuffer send_, slots_, ack_;
  std::vector<Request> requests_;
};

struct P2pRow {
  P2pTest test = P2pTest::latency;
  std::size_t bytes = 0;
  int window = 1;
  int pairs = 1;
  int first = -1, second = -1;  // --pairs each: the pair; -1: every pair r, r + n/2 at once
  CaseResult result;            // with one pair, over its two ranks (P2pCase::takes_part)
  double call_s() const { return result.stats.mean.mean; }
  double latency_us() const;      // latency rows: half the mean round trip; NaN otherwise
  double bandwidth_GBps() const;  // every pair's, summed; NaN for latency rows
  double message_rate_M() const;  // millions of messages per second, every pair's, summed
};

Columns<P2pRow> p2p_columns();
void print_p2p_header(const Session& s, const Provenance& prov, const RunOptions& ro, bool each_pair,
                      const Columns<P2pRow>& columns);

}  // namespace sp::coll
