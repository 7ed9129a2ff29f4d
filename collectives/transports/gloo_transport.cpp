// The Gloo transport: Gloo's TCP pairs, connected through MPI, for the point-to-point the
// schedules need (unbound buffers: send/recv to a rank and a slot), and Gloo's own ring allreduce
// as the library allreduce — what PyTorch's Gloo process group runs on CPUs.
//
// Rendezvous: every rank creates one TCP pair per peer and the pairs' addresses are exchanged with
// one MPI_Alltoall (Gloo's own MPI context is not in Debian's build). The device listens on the
// interface GLOO_SOCKET_IFNAME names (PyTorch's variable), else on the address this host's name
// resolves to. Timeout for any wait: SCALEPROBE_GLOO_TIMEOUT_S seconds (default 300).
#include <fmt/format.h>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/broadcast.h>
#include <gloo/reduce.h>
#include <gloo/config.h>
#include <gloo/context.h>
#include <gloo/transport/device.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <thread>
#include <type_traits>
#include <vector>

#include "collectives/transports/transport.hpp"
#include "core/run/error.hpp"
#include "core/run/options.hpp"
#include "core/measure/provenance.hpp"

namespace sp::coll {
namespace {

// Gloo's own collectives build slots with a prefix in the top byte; ours carry 0x5c there, so a
// schedule's tag never matches a message of Gloo's allreduce.
std::uint64_t gloo_slot(int tag) { return (std::uint64_t{0x5c} << 56) | static_cast<std::uint32_t>(tag); }

std::chrono::milliseconds gloo_timeout() {
  const char* text = std::getenv("SCALEPROBE_GLOO_TIMEOUT_S");
  if (!text || !*text) return std::chrono::seconds(300);
  return std::chrono::seconds(parse_bounded_integer("SCALEPROBE_GLOO_TIMEOUT_S", text, 1, 86400, "whole seconds"));
}

// SCALEPROBE_GLOO_LOOP: "idle" (default) or "normal", the scheduling class of Gloo's event-loop
// thread. Gloo's loop re-polls a socket whose data waits for a receive the rank has not posted yet
// (level-triggered epoll), so it spins until the rank's own thread posts it; on the rank's one
// core that thread then waits for the scheduler tick to preempt the loop (about 4 ms a message: the
// ring allreduce of 1 MiB took a median 8005.09 µs against 314.02 µs at idle priority, 2 ranks,
// results/2026-12-02-vm-f25m17-gloo-loop-idle).
// At idle priority the loop runs only when the core has nothing else to do, and any thread of the
// rank that wakes preempts it at once.
bool gloo_loop_idle() {
  const char* text = std::getenv("SCALEPROBE_GLOO_LOOP");
  if (!text || !*text || std::strcmp(text, "idle") == 0) return true;
  if (std::strcmp(text, "normal") == 0) return false;
  fail("SCALEPROBE_GLOO_LOOP is '{}': expected idle or normal", text);
}

std::shared_ptr<gloo::transport::Device> make_tcp_device(bool loop_idle) {
  gloo::transport::tcp::attr attr;
  if (const char* iface = std::getenv("GLOO_SOCKET_IFNAME"); iface && *iface) {
    attr.iface = iface;
  } else {
    attr.hostname = host_name();
  }
  if (!loop_idle) return gloo::transport::tcp::CreateDevice(attr);
  // The device starts its loop thread, which inherits the scheduling class of the thread that
  // creates it: a helper at idle priority (a thread cannot raise itself back from it unprivileged).
  std::shared_ptr<gloo::transport::Device> device;
  std::exception_ptr error;
  std::thread([&] {
    try {
      sched_param none{};
      if (int e = pthread_setschedparam(pthread_self(), SCHED_IDLE, &none); e != 0)
        fail("gloo: cannot give the event loop idle priority ({})", std::strerror(e));
      device = gloo::transport::tcp::CreateDevice(attr);
    } catch (...) {
      error = std::current_exception();
    }
  }).join();
  if (error) std::rethrow_exception(error);
  return device;
}

// A gloo::Context whose pairs are connected by exchanging their addresses over MPI.
class MpiConnectedContext final : public gloo::Context {
 public:
  MpiConnectedContext(MPI_Comm comm, int rank, int size, bool loop_idle) : gloo::Context(rank, size) {
    setTimeout(gloo_timeout());
    device_ = make_tcp_device(loop_idle);
    transportContext_ = device_->createContext(rank, size);
    transportContext_->setTimeout(getTimeout());
    // Record i of what this rank sends is the address of its pair to rank i: rank i connects its
    // pair to this rank with it.
    constexpr std::size_t kRecord = sizeof(std::uint32_t) + gloo::transport::Address::kMaxByteSize;
    std::vector<char> mine(kRecord * size), theirs(kRecord * size);
    for (int i = 0; i < size; ++i) {
      if (i == rank) continue;
      const std::vector<char> address = transportContext_->createPair(i)->address().bytes();
      if (address.size() > gloo::transport::Address::kMaxByteSize)
        fail("gloo: a pair address of {} bytes", address.size());
      const auto length = static_cast<std::uint32_t>(address.size());
      std::memcpy(&mine[kRecord * i], &length, sizeof length);
      std::memcpy(&mine[kRecord * i + sizeof length], address.data(), address.size());
    }
    SP_MPI_CHECK(MPI_Alltoall(mine.data(), static_cast<int>(kRecord), MPI_BYTE, theirs.data(),
                              static_cast<int>(kRecord), MPI_BYTE, comm));
    // Every rank connects in rank order, as Gloo's own rendezvous does: no cycle of waits.
    for (int i = 0; i < size; ++i) {
      if (i == rank) continue;
      std::uint32_t length = 0;
      std::memcpy(&length, &theirs[kRecord * i], sizeof length);
      const char* at = &theirs[kRecord * i + sizeof length];
      transportContext_->getPair(i)->connect(std::vector<char>(at, at + length));
    }
  }
};

class GlooTransport final : public Transport {
 public:
  explicit GlooTransport(MPI_Comm comm) {
    SP_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
    SP_MPI_CHECK(MPI_Comm_size(comm, &size_));
    guarded("connecting", [&] { context_ = std::make_shared<MpiConnectedContext>(comm, rank_, size_, loop_idle_); });
  }
  std::string_view name() const override { return "gloo"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string describe() const override {
    const char* iface = std::getenv("GLOO_SOCKET_IFNAME");
    return fmt::format("Gloo {}.{}.{}, TCP {}, event loop at {} priority, ring allreduce", GLOO_VERSION_MAJOR,
                       GLOO_VERSION_MINOR, GLOO_VERSION_PATCH,
                       iface && *iface ? fmt::format("on interface {}", iface) : "on this host's name",
                       loop_idle_ ? "idle" : "normal");
  }

  // An empty message is not sent at all: both sides of a schedule compute the same count, so the
  // receiver skips it too (an unbound buffer of 0 bytes is not allowed).
  Request post_send(const void* data, std::size_t count, Dtype d, int peer, int tag) override {
    const std::size_t bytes = count * size_of(d);
    if (bytes == 0) return {};
    Request r{acquire(const_cast<void*>(data), bytes, /*is_send=*/true)};
    guarded("send", [&] { slots_[r.slot].buffer->send(peer, gloo_slot(tag)); });
    return r;
  }
  Request post_recv(void* data, std::size_t count, Dtype d, int peer, int tag) override {
    const std::size_t bytes = count * size_of(d);
    if (bytes == 0) return {};
    Request r{acquire(data, bytes, /*is_send=*/false)};
    guarded("recv", [&] { slots_[r.slot].buffer->recv(peer, gloo_slot(tag)); });
    return r;
  }
  void wait(Request& r) override {
    if (!r.pending()) return;
    Slot& s = slots_[r.slot];
    guarded("wait", [&] {
      s.is_send ? s.buffer->waitSend(context_->getTimeout()) : s.buffer->waitRecv(context_->getTimeout());
    });
    s.busy = false;
    r = Request{};
  }

  bool busy_polls() const override { return false; }

  void library_allreduce(const void* send, void* recv, std::size_t count, Dtype d, Op o) override {
    if (count == 0) return;
    if (send != recv) std::memcpy(recv, send, count * size_of(d));
    gloo::AllreduceOptions opts(context_);
    opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
    switch (d) {
      case Dtype::f32:
        opts.setOutput(static_cast<float*>(recv), count);
        break;
      case Dtype::f64:
        opts.setOutput(static_cast<double*>(recv), count);
        break;
      case Dtype::i32:
        opts.setOutput(static_cast<std::int32_t*>(recv), count);
        break;
      case Dtype::bf16:
        opts.setOutput(static_cast<std::uint16_t*>(recv), count);
        break;
    }
    opts.setReduceFunction(reduce_function(d, o));
    guarded("allreduce", [&] { gloo::allreduce(opts); });
  }

  // Gloo's own all-gather, broadcast (in recv: the harness's one buffer), reduce and all-to-all;
  // it has no reduce-scatter of this API (the default refuses it).
  void library_collective(const CollectiveCall& call, const void* send, void* recv, Dtype d, Op o) override {
    const std::size_t count = call.count;
    const int root = call.root;
    if (count == 0) return;
    void* in = const_cast<void*>(send);  // Gloo's buffers are not const, it only reads an input
    const std::size_t block = count / static_cast<std::size_t>(size_);
    with_type(d, [&](auto* type) {
      using T = std::remove_pointer_t<decltype(type)>;
      switch (call.collective) {
        case Collective::all_gather: {
          gloo::AllgatherOptions opts(context_);
          opts.setInput(static_cast<T*>(in), block);
          opts.setOutput(static_cast<T*>(recv), count);
          return guarded("allgather", [&] { gloo::allgather(opts); });
        }
        case Collective::broadcast: {
          gloo::BroadcastOptions opts(context_);
          opts.setRoot(root);
          if (rank_ == root && send != recv) opts.setInput(static_cast<T*>(in), count);
          opts.setOutput(static_cast<T*>(recv), count);
          return guarded("broadcast", [&] { gloo::broadcast(opts); });
        }
        case Collective::reduce: {
          gloo::ReduceOptions opts(context_);
          opts.setRoot(root);
          opts.setInput(static_cast<T*>(in), count);
          opts.setOutput(static_cast<T*>(recv), count);
          opts.setReduceFunction(reduce_function(d, o));
          return guarded("reduce", [&] { gloo::reduce(opts); });
        }
        case Collective::all_to_all: {
          gloo::AlltoallOptions opts(context_);
          opts.setInput(static_cast<T*>(in), count);
          opts.setOutput(static_cast<T*>(recv), count);
          return guarded("alltoall", [&] { gloo::alltoall(opts); });
        }
        default:
          Transport::library_collective(call, send, recv, d, o);
      }
    });
  }

 private:
  // A posted operation owns one unbound buffer until waited for. A buffer is kept for reuse and
  // rebuilt only when a later post names another address or length, so a schedule repeated on
  // the same buffers (the timed loop) allocates nothing after its first call.
  struct Slot {
    std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
    void* data = nullptr;
    std::size_t bytes = 0;
    bool is_send = false;
    bool busy = false;
  };

  int acquire(void* data, std::size_t bytes, bool is_send) {
    int chosen = -1;
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i) {
      if (slots_[i].busy) continue;
      if (slots_[i].data == data && slots_[i].bytes == bytes) {
        chosen = i;
        break;
      }
      if (chosen < 0) chosen = i;
    }
    if (chosen < 0) {
      slots_.emplace_back();
      chosen = static_cast<int>(slots_.size()) - 1;
    }
    Slot& s = slots_[chosen];
    if (s.data != data || s.bytes != bytes || !s.buffer) {
      guarded("buffer", [&] { s.buffer = context_->createUnboundBuffer(data, bytes); });
      s.data = data;
      s.bytes = bytes;
    }
    s.is_send = is_send;
    s.busy = true;
    return chosen;
  }

  // Gloo asks for out = a op b, one pass, as its own gloo::sum makes it for PyTorch (a copy of a
  // first would make the reference slower than the library it stands for).
  static std::function<void(void*, const void*, const void*, std::size_t)> reduce_function(Dtype d, Op o) {
    return [d, o](void* out, const void* a, const void* b, std::size_t n) {
      if (out == b) std::swap(a, b);  // the ops commute; out may be a, never only partly b
      reduce_local_into(out, a, b, n, d, o);
    };
  }

  // f called with a null pointer of the element type of d (bf16 travels as uint16_t).
  template <typename F>
  static void with_type(Dtype d, F&& f) {
    switch (d) {
      case Dtype::f32:
        return f(static_cast<float*>(nullptr));
      case Dtype::f64:
        return f(static_cast<double*>(nullptr));
      case Dtype::i32:
        return f(static_cast<std::int32_t*>(nullptr));
      case Dtype::bf16:
        return f(static_cast<std::uint16_t*>(nullptr));
    }
  }

  // Gloo reports failures (a peer gone, a timeout) by throwing its own exceptions: one line naming
  // the transport, the operation and Gloo's reason.
  template <typename Fn>
  void guarded(const char* what, Fn&& fn) {
    try {
      fn();
    } catch (const sp::Error&) {
      throw;
    } catch (const std::exception& e) {
      fail("gloo transport, rank {}: {} failed: {}", rank_, what, e.what());
    }
  }

  int rank_ = 0, size_ = 1;
  std::shared_ptr<gloo::Context> context_;
  const bool loop_idle_ = gloo_loop_idle();  // decided once, before the device starts its loop
  std::vector<Slot> slots_;
};

}  // namespace

std::unique_ptr<Transport> make_gloo_transport(MPI_Comm comm) { return std::make_unique<GlooTransport>(comm); }

}  // namespace sp::coll
