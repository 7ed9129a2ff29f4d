// A transport that forwards every call to another one: the base of the transports that change only
// where buffers live or what the local work does (the node segment's memory in backend.cpp, the
// simulated build's timing-only buffers in timing_only.cpp) and of the tests' doubles that
// misbehave in one call (tests/mpi/test_harness.cpp, test_p2p.cpp), so a new Transport method is
// forwarded in one place.
#pragma once
#include "collectives/transports/transport.hpp"

namespace sp::coll {

class ForwardingTransport : public Transport {
 public:
  explicit ForwardingTransport(Transport& inner) : t_(inner) {}
  std::string_view name() const override { return t_.name(); }
  int rank() const override { return t_.rank(); }
  int size() const override { return t_.size(); }
  std::string describe() const override { return t_.describe(); }
  Request post_send(const void* d, std::size_t n, Dtype dt, int peer, int tag) override {
    return t_.post_send(d, n, dt, peer, tag);
  }
  Request post_recv(void* d, std::size_t n, Dtype dt, int peer, int tag) override {
    return t_.post_recv(d, n, dt, peer, tag);
  }
  void wait(Request& r) override { t_.wait(r); }
  bool can_progress() const override { return t_.can_progress(); }
  bool busy_polls() const override { return t_.busy_polls(); }
  bool test(Request& r) override { return t_.test(r); }
  std::size_t wait_any(std::span<Request* const> requests) override { return t_.wait_any(requests); }
  Request post_library_allreduce(const void* s, void* r, std::size_t n, Dtype d, Op o) override {
    return t_.post_library_allreduce(s, r, n, d, o);
  }
  void library_allreduce(const void* s, void* r, std::size_t n, Dtype d, Op o) override {
    t_.library_allreduce(s, r, n, d, o);
  }
  void library_collective(const CollectiveCall& c, const void* s, void* r, Dtype d, Op o) override {
    t_.library_collective(c, s, r, d, o);
  }
  Request post_library_collective(const CollectiveCall& c, const void* s, void* r, Dtype d, Op o) override {
    return t_.post_library_collective(c, s, r, d, o);
  }
  bool on_device() const override { return t_.on_device(); }
  bool holds_data() const override { return t_.holds_data(); }
  TransportBuffer allocate(std::size_t bytes) const override { return t_.allocate(bytes); }
  void copy(void* dst, const void* src, std::size_t bytes) const override { t_.copy(dst, src, bytes); }
  void stream_copy(void* dst, const void* src, std::size_t bytes) const override { t_.stream_copy(dst, src, bytes); }
  void from_host(void* dst, const void* host, std::size_t bytes) const override { t_.from_host(dst, host, bytes); }
  void to_host(void* host, const void* src, std::size_t bytes) const override { t_.to_host(host, src, bytes); }
  void synchronize() override { t_.synchronize(); }
  void mark() override { t_.mark(); }
  double seconds_since_mark() override { return t_.seconds_since_mark(); }
  std::size_t count_mismatches(const void* got, const void* want, std::size_t count, Dtype d) const override {
    return t_.count_mismatches(got, want, count, d);
  }
  void reduce(void* inout, const void* in, std::size_t count, Dtype d, Op o) const override {
    t_.reduce(inout, in, count, d, o);
  }
  void scale(void* data, std::size_t count, Dtype d, double factor) const override { t_.scale(data, count, d, factor); }
  void send(const void* d, std::size_t n, Dtype dt, int peer, int tag) override { t_.send(d, n, dt, peer, tag); }
  void recv(void* d, std::size_t n, Dtype dt, int peer, int tag) override { t_.recv(d, n, dt, peer, tag); }
  void sendrecv(const void* out, std::size_t out_n, void* in, std::size_t in_n, Dtype dt, int dest, int source,
                int tag) override {
    t_.sendrecv(out, out_n, in, in_n, dt, dest, source, tag);
  }

 protected:
  Transport& inner() const { return t_; }

 private:
  Transport& t_;
};

}  // namespace sp::coll
