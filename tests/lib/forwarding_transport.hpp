// A test double's base: a transport that forwards its point-to-point calls to another (`inner()`,
// made on first use), so a double overrides only what it changes (a hooked library allreduce, a
// corrupted receive).
#pragma once
#include <string>
#include <string_view>

#include "collectives/transports/transport.hpp"

namespace sp::coll::testing {

template <Transport& (*inner)()>
class ForwardingTransport : public Transport {
 public:
  int rank() const override { return inner().rank(); }
  int size() const override { return inner().size(); }
  std::string describe() const override { return "test double"; }
  Request post_send(const void* d, std::size_t n, Dtype t, int peer, int tag) override {
    return inner().post_send(d, n, t, peer, tag);
  }
  Request post_recv(void* d, std::size_t n, Dtype t, int peer, int tag) override {
    return inner().post_recv(d, n, t, peer, tag);
  }
  void wait(Request& r) override { inner().wait(r); }
};

}  // namespace sp::coll::testing
