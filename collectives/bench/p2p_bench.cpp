#include "collectives/bench/p2p_bench.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>

#include "core/measure/cache_flush.hpp"
#include "core/run/error.hpp"
#include "core/run/sizes.hpp"

namespace sp::coll {

namespace {
constexpr int kDataTag = 0x9901, kAckTag = 0x9902;
std::string_view kTestNames[] = {"latency", "bw", "bibw"};
}  // namespace

std::string_view name(P2pTest t) { return kTestNames[static_cast<int>(t)]; }

P2pTest parse_p2p_test(std::string_view text) {
  for (int i = 0; i < 3; ++i)
    if (text == kTestNames[i]) return static_cast<P2pTest>(i);
  fail("unknown point-to-point test '{}' (choose latency, bw, bibw)", text);
}

P2pCase::P2pCase(P2pTest test, std::size_t bytes, int window, bool distinct_slots, Transport& t, int first, int second)
    : test_(test),
      count_(bytes / 4),
      window_(test == P2pTest::latency ? 1 : window),
      slots_count_(distinct_slots ? window_ : 1),
      t_(t),
      first_(first),
      second_(second) {
  send_ = filled_buffer(t_, bytes, [&](std::byte* p) { fill_pattern(p, count_, Dtype::i32, t_.rank(), t_.size()); });
  slots_ = t_.allocate(bytes * std::size_t(slots_count_));
  ack_ = t_.allocate(4);
  requests_.reserve(2 * std::size_t(window_));
}

std::uint64_t P2pCase::evict_from_cache() {
  if (t_.on_device()) return 0;
  flush_from_cache(send_.data(), send_.size());
  flush_from_cache(slots_.data(), slots_.size());
  return send_.size() + slots_.size();
}

void P2pCase::post_window_recvs() {
  for (int k = 0; k < window_; ++k)
    requests_.push_back(
        t_.post_recv(slots_.data() + std::size_t(k % slots_count_) * count_ * 4, count_, Dtype::i32, peer(), kDataTag));
}

void P2pCase::post_window_sends() {
  for (int k = 0; k < window_; ++k)
    requests_.push_back(t_.post_send(send_.data(), count_, Dtype::i32, peer(), kDataTag));
}

void P2pCase::wait_all() {
  for (Request& r : requests_) t_.wait(r);
  requests_.clear();
}

void P2pCase::call(int) {
  if (!active()) return;  // --pairs each: another pair's turn
  switch (test_) {
    case P2pTest::latency:
      if (sender()) {
        t_.send(send_.data(), count_, Dtype::i32, peer(), kDataTag);
        t_.recv(slots_.data(), count_, Dtype::i32, peer(), kDataTag);
      } else {
        t_.recv(slots_.data(), count_, Dtype::i32, peer(), kDataTag);
        t_.send(send_.data(), count_, Dtype::i32, peer(), kDataTag);
      }
      break;
    case P2pTest::bw:
      if (sender()) {
        post_window_sends();
        wait_all();
        t_.recv(ack_.data(), 1, Dtype::i32, peer(), kAckTag);
      } else {
        post_window_recvs();
        wait_all();
        t_.send(ack_.data(), 1, Dtype::i32, peer(), kAckTag);
      }
      break;
    case P2pTest::bibw:
      post_window_recvs();
      post_window_sends();
      wait_all();
      break;
  }
}

// One call into cleared slots; every slot a receiver filled must hold its peer's pattern (one slot:
// the window's messages, all the same pattern, landed in it).
long long P2pCase::verify() {
  slots_ = t_.allocate(slots_.size());  // zeroed
  call(-1);
  t_.synchronize();
  const bool received = active() && (test_ != P2pTest::bw || !sender());
  if (!received) return 0;
  const TransportBuffer want = filled_buffer(t_, std::max<std::size_t>(count_ * 4, 1), [&](std::byte* p) {
    fill_pattern(p, count_, Dtype::i32, peer(), t_.size());
  });
  long long wrong = 0;
  for (int k = 0; k < slots_count_; ++k)
    wrong += static_cast<long long>(
        t_.count_mismatches(slots_.data() + std::size_t(k) * count_ * 4, want.data(), count_, Dtype::i32));
  return wrong;
}

double P2pRow::latency_us() const { return test == P2pTest::latency ? call_s() / 2 * 1e6 : std::nan(""); }

double P2pRow::bandwidth_GBps() const {
  const double t = call_s();
  if (test == P2pTest::latency || t <= 0) return std::nan("");
  return (test == P2pTest::bibw ? 2.0 : 1.0) * double(bytes) * window * pairs / t / 1e9;
}

double P2pRow::message_rate_M() const {
  const double t = call_s();
  if (t <= 0) return std::nan("");
  const double messages = test == P2pTest::latency ? 2.0 : (test == P2pTest::bibw ? 2.0 : 1.0) * window;
  return messages * pairs / t / 1e6;
}

Columns<P2pRow> p2p_columns() {
  using R = P2pRow;
  auto i64 = [](auto v) { return CellValue(static_cast<std::int64_t>(v)); };
  auto us = [](double s) { return fixed(s * 1e6, 2); };
  auto or_dash = [](double v, int decimals) { return std::isnan(v) ? std::string("-") : fixed(v, decimals); };
  const auto& st = [](const R& r) -> const CaseStats& { return r.result.stats; };
  Columns<R> c;
  c.table = {
      {"case", "", "case id (samples.case refers to it)", [=](const R& r) { return i64(r.result.id); }},
      {"test", "", "latency (ping-pong), bw (a window one way), bibw (windows both ways)",
       [](const R& r) { return CellValue(std::string(name(r.test))); }},
      {"bytes", "B", "message size", [=](const R& r) { return i64(r.bytes); }},
      {"window", "", "messages in flight per pair and direction (1 for latency)",
       [=](const R& r) { return i64(r.window); }},
      {"pairs", "", "rank pairs running at once (r with r + n/2; 1 with --pairs each)",
       [=](const R& r) { return i64(r.pairs); }},
      {"rank_a", "", "--pairs each: the pair's first rank (the sender of bw); -1: every pair r, r + n/2 at once",
       [=](const R& r) { return i64(r.first); }},
      {"rank_b", "", "--pairs each: the pair's second rank; -1: every pair at once",
       [=](const R& r) { return i64(r.second); }},
      {"iters", "", "timed calls (a round trip or a window each)", [=](const R& r) { return i64(r.result.iters); }},
      {"warmup", "", "untimed warm-up calls", [=](const R& r) { return i64(r.result.warmup); }},
  };
  for (auto& t : timing_table_columns<R>("call")) c.table.push_back(std::move(t));
  c.table.insert(c.table.end(),
                 {
                     {"latency_us", "us", "t_mean / 2: one-way latency (latency rows; NaN otherwise)",
                      [](const R& r) { return CellValue(r.latency_us()); }},
                     {"bandwidth_GBps", "GB/s", "bytes moved by every pair per call / t_mean (NaN for latency rows)",
                      [](const R& r) { return CellValue(r.bandwidth_GBps()); }},
                     {"message_rate_M", "1/us", "messages of every pair per call / t_mean, in millions per second",
                      [](const R& r) { return CellValue(r.message_rate_M()); }},
                     {"wrong", "", "elements wrong in verification, summed over ranks",
                      [=](const R& r) { return i64(r.result.wrong); }},
                 });
  c.printed = {
      {"test", 7, [](const R& r) { return std::string(name(r.test)); }},
      {"size", 9, [](const R& r) { return format_size(r.bytes); }},
      {"window", 6, [](const R& r) { return std::to_string(r.window); }},
      {"pairs", 5,
       [](const R& r) { return r.first >= 0 ? fmt::format("{}-{}", r.first, r.second) : std::to_string(r.pairs); }},
      {"iters", 6, [](const R& r) { return std::to_string(r.result.iters); }},
      {"t_mean(us)", 10, [=](const R& r) { return us(st(r).mean.mean); }},
      {"p50(us)", 10, [=](const R& r) { return us(st(r).iteration.median); }},
      {"p99(us)", 10, [=](const R& r) { return us(st(r).iteration.p99); }},
      {"lat(us)", 9, [=](const R& r) { return or_dash(r.latency_us(), 2); }},
      {"GB/s", 8, [=](const R& r) { return or_dash(r.bandwidth_GBps(), 3); }},
      {"Mmsg/s", 8, [=](const R& r) { return or_dash(r.message_rate_M(), 3); }},
      {"#wrong", 6, [](const R& r) { return std::to_string(r.result.wrong); }},
  };
  return c;
}

void print_p2p_header(const Session& s, const Provenance& prov, const RunOptions& ro, bool each_pair,
                      const Columns<P2pRow>& columns) {
  if (s.rank != 0) return;
  if (each_pair)
    fmt::print(
        "# p2p_perf: {} ranks on {} host(s) [{}], every one of the {} pairs alone in turn (pairs: a-b; GB/s "
        "and latency over the pair's two ranks)\n",
        s.size, *prov.find("nhosts"), *prov.find("hosts"), s.size * (s.size - 1) / 2);
  else
    fmt::print("# p2p_perf: {} ranks on {} host(s) [{}], {} pair(s): rank r with rank r + {}\n", s.size,
               *prov.find("nhosts"), *prov.find("hosts"), s.size / 2, s.size / 2);
  fmt::print("# backend: {} ({})\n", *prov.find("backend"), *prov.find("backend_library"));
  fmt::print(
      "# OSU's definitions: latency = half a ping-pong's round trip; bw = a window of non-blocking sends\n"
      "# and a 4-byte acknowledgement; bibw = windows both ways. GB/s and Mmsg/s: every pair's, summed.\n");
  fmt::print("# sync between calls: {}; off-cache: {}\n", ro.sync,
             ro.off_cache ? "yes (buffers evicted from the cache before each call)" : "no");
  fmt::print("{}", columns.header_line());
  std::fflush(stdout);
}

}  // namespace sp::coll
