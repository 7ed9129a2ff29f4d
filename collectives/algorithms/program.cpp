#include "collectives/algorithms/program.hpp"

#include <algorithm>
#include <array>
#include <climits>

#include "collectives/transports/node_segment.hpp"
#include "core/run/error.hpp"

namespace sp::coll {

std::size_t Program::messages() const {
  std::size_t n = 0;
  for (const Action& a : actions) {
    switch (a.kind) {
      case ActionKind::post_send:
      case ActionKind::post_recv:
      case ActionKind::send:
      case ActionKind::recv:
        ++n;
        break;
      case ActionKind::sendrecv:
        n += 2;
        break;
      default:
        break;
    }
  }
  return n;
}

// ---------------------------------------------------------------------------------------------
// Building

ProgramBuilder::ProgramBuilder(const Shape& s, int tag) {
  if (s.scaled && !is_floating(s.dtype))
    fail("a scaled allreduce of {} elements: only floating-point results scale", name(s.dtype));
  p_.shape = s;
  p_.tag = tag + s.tag_offset;
}

void ProgramBuilder::step() {
  // An empty step is no step: the schedules mark one before each round whether or not it moves data.
  if (p_.steps.empty() || p_.steps.back() != p_.actions.size()) p_.steps.push_back(std::uint32_t(p_.actions.size()));
}

Span ProgramBuilder::scratch(std::size_t offset, std::size_t count) {
  p_.scratch_elements = std::max(p_.scratch_elements, offset + count);
  return {Buffer::scratch, offset, count};
}

int ProgramBuilder::acquire() {
  if (free_slots_.empty()) {
    if (p_.slots == kMaxRequests) fail("a program with more than {} requests in flight", kMaxRequests);
    return p_.slots++;
  }
  const int s = free_slots_.back();
  free_slots_.pop_back();
  return s;
}

void ProgramBuilder::add(Action a) {
  if (p_.steps.empty()) p_.steps.push_back(0);
  p_.actions.push_back(a);
}

int ProgramBuilder::post_send(Span data, int peer) {
  const int slot = acquire();
  add({ActionKind::post_send, peer, slot, data, {}});
  return slot;
}

int ProgramBuilder::post_recv(Span data, int peer) {
  const int slot = acquire();
  add({ActionKind::post_recv, peer, slot, data, {}});
  return slot;
}

void ProgramBuilder::wait(int& slot) {
  if (slot < 0) return;
  add({ActionKind::wait, -1, slot, {}, {}});
  free_slots_.push_back(slot);
  slot = -1;
}

void ProgramBuilder::send(Span data, int peer) { add({ActionKind::send, peer, -1, data, {}}); }
void ProgramBuilder::recv(Span data, int peer) { add({ActionKind::recv, peer, -1, data, {}}); }
void ProgramBuilder::sendrecv(Span out, Span in, int peer) { add({ActionKind::sendrecv, peer, -1, out, in}); }
void ProgramBuilder::sendrecv(Span out, int to, Span in, int from) {
  add({ActionKind::sendrecv, to, -1, out, in, from});
}
void ProgramBuilder::reduce(Span into, Span from) { add({ActionKind::reduce, -1, -1, into, from}); }
void ProgramBuilder::reduce_into(Span to, Span a, Span b) {
  if (to == a) return reduce(to, b);
  Action x{ActionKind::reduce_into, -1, -1, to, a};
  x.c = b;
  add(x);
}
void ProgramBuilder::copy(Span to, Span from) { add({ActionKind::copy, -1, -1, to, from}); }
void ProgramBuilder::stream_copy(Span to, Span from) { add({ActionKind::stream_copy, -1, -1, to, from}); }

void ProgramBuilder::scale(Span final_values) {
  if (p_.shape.scaled && final_values.count > 0) add({ActionKind::scale, -1, -1, final_values, {}});
}

void ProgramBuilder::scales_result() { p_.scales = p_.shape.scaled; }

void ProgramBuilder::library_allreduce() {
  const std::size_t n = p_.shape.count;
  add({ActionKind::library_allreduce, -1, -1, recv_buffer(0, n),
       p_.shape.in_place ? recv_buffer(0, n) : send_buffer(0, n)});
}

void ProgramBuilder::library_call() {
  const Shape& s = p_.shape;
  if (s.collective == Collective::allreduce) return library_allreduce();
  const CallCounts n = call_counts(s.call(), s.nranks, s.rank);
  add({ActionKind::library_collective, -1, -1, recv_buffer(0, n.recv), send_buffer(0, n.send)});
}

int ProgramBuilder::signal() {
  add({ActionKind::signal, -1, p_.signals, {}, {}});
  return p_.signals++;
}

void ProgramBuilder::wait_signals(int k) {
  if (k < 0 || k >= p_.signals) fail("a program waits for signal {} before giving it", k);
  add({ActionKind::wait_signals, -1, k, {}, {}});
}

void ProgramBuilder::wait_previous_runs() { add({ActionKind::wait_signals, -1, -1, {}, {}}); }

void ProgramBuilder::wait_input(std::size_t offset) {
  add({ActionKind::wait_input, -1, -1, recv_buffer(offset, p_.shape.count - std::min(offset, p_.shape.count)), {}});
  p_.waits_input = true;
}

void ProgramBuilder::append(const Program& sub, std::size_t recv_offset) {
  if (std::size_t(p_.slots) != free_slots_.size()) fail("a program appended while requests are in flight");
  if (sub.signals > 0) fail("a node-local program appended to another");
  for (std::size_t i = 0, next_step = 0; i < sub.actions.size(); ++i) {
    for (; next_step < sub.steps.size() && sub.steps[next_step] <= i; ++next_step) step();
    Action a = sub.actions[i];
    for (Span* s : {&a.a, &a.b, &a.c}) {
      if (s->buffer == Buffer::recv && s->owner < 0) s->offset += recv_offset;
      if (s->buffer == Buffer::scratch) scratch(s->offset, s->count);
      if (s->buffer == Buffer::send || s->buffer == Buffer::segment || s->owner >= 0)
        fail("an appended program reads its own send buffer or the node's (build it in place)");
    }
    add(a);
  }
  p_.slots = std::max(p_.slots, sub.slots);
  free_slots_.clear();
  for (int k = p_.slots - 1; k >= 0; --k) free_slots_.push_back(k);
}

bool ProgramBuilder::begin_in_recv(std::size_t skip_offset, std::size_t skip_count) {
  const Shape& s = p_.shape;
  if (s.count == 0) return false;
  if (s.nranks == 1 || skip_count == 0) skip_offset = s.count;  // nothing skipped
  const std::size_t skip_end = std::min(s.count, skip_offset + skip_count);
  if (!s.in_place) {
    if (skip_offset > 0) copy(recv_buffer(0, skip_offset), send_buffer(0, skip_offset));
    if (skip_end < s.count) copy(recv_buffer(skip_end, s.count - skip_end), send_buffer(skip_end, s.count - skip_end));
  }
  return s.nranks > 1;
}

std::size_t ProgramBuilder::segment_elements(std::size_t max_elements) const {
  const Shape& s = p_.shape;
  const std::size_t seg =
      s.chunk_bytes == 0 ? max_elements : std::max<std::size_t>(1, s.chunk_bytes / size_of(s.dtype));
  return std::min({seg, max_elements, static_cast<std::size_t>(INT_MAX)});
}

Program ProgramBuilder::finish() { return std::move(p_); }

// ---------------------------------------------------------------------------------------------
// Running

namespace {

void* address(const Bindings& b, const Span& s, Dtype d) {
  std::byte* base = s.buffer == Buffer::send      ? static_cast<std::byte*>(const_cast<void*>(b.send))
                    : s.buffer == Buffer::recv    ? static_cast<std::byte*>(b.recv)
                    : s.buffer == Buffer::scratch ? b.scratch
                                                  : b.segment->staging(s.owner, b.channel);
  if (s.owner >= 0 && s.buffer != Buffer::segment) base = b.segment->peer_address(base, s.owner);
  return base + s.offset * size_of(d);
}

// A node-local program's segment, its run begun; nullptr for a program without signals.
NodeSegment* begin_signals(const Program& p, const Bindings& b, std::uint64_t& base) {
  if (p.signals == 0) return nullptr;
  if (!b.segment) fail("a node-local program run without a node segment");
  base = b.segment->begin_run(std::uint64_t(p.signals), b.channel);
  return b.segment;
}

// The local work (reduce, copy, scale), the same in both executors.
void run_local(const Action& x, const Program& p, const Bindings& b, Transport& t) {
  const Dtype d = p.shape.dtype;
  switch (x.kind) {
    case ActionKind::reduce:
      t.reduce(address(b, x.a, d), address(b, x.b, d), x.a.count, d, p.shape.op);
      break;
    case ActionKind::reduce_into:
      t.reduce_into(address(b, x.a, d), address(b, x.b, d), address(b, x.c, d), x.a.count, d, p.shape.op);
      break;
    case ActionKind::copy:
      t.copy(address(b, x.a, d), address(b, x.b, d), x.a.count * size_of(d));
      break;
    case ActionKind::stream_copy:
      t.stream_copy(address(b, x.a, d), address(b, x.b, d), x.a.count * size_of(d));
      break;
    case ActionKind::scale:
      if (b.scale != 1.0) t.scale(address(b, x.a, d), x.a.count, d, b.scale);
      break;
    default:
      fail("action {} is not local work", int(x.kind));
  }
}

}  // namespace

void run_blocking(const Program& p, const Bindings& b, Transport& t) {
  const Dtype d = p.shape.dtype;
  auto at = [&](const Span& s) { return address(b, s, d); };
  std::array<Request, kMaxRequests> req;  // the program's slots
  std::uint64_t base = 0;
  NodeSegment* seg = begin_signals(p, b, base);
  for (const Action& x : p.actions) {
    switch (x.kind) {
      case ActionKind::post_send:
        req[x.slot] = t.post_send(at(x.a), x.a.count, d, x.peer, p.tag);
        break;
      case ActionKind::post_recv:
        req[x.slot] = t.post_recv(at(x.a), x.a.count, d, x.peer, p.tag);
        break;
      case ActionKind::wait:
        t.wait(req[x.slot]);
        break;
      case ActionKind::send:
        t.send(at(x.a), x.a.count, d, x.peer, p.tag);
        break;
      case ActionKind::recv:
        t.recv(at(x.a), x.a.count, d, x.peer, p.tag);
        break;
      case ActionKind::sendrecv:
        t.sendrecv(at(x.a), x.a.count, at(x.b), x.b.count, d, x.peer, x.source(), p.tag);
        break;
      case ActionKind::library_allreduce:
        t.library_allreduce(at(x.b), at(x.a), x.a.count, d, p.shape.op);
        break;
      case ActionKind::library_collective:
        t.library_collective(p.shape.call(), at(x.b), at(x.a), d, p.shape.op);
        break;
      case ActionKind::signal:
        seg->signal(base + std::uint64_t(x.slot + 1), b.channel);
        break;
      case ActionKind::wait_signals:
        seg->wait_all(base + std::uint64_t(x.slot + 1), b.channel);
        break;
      case ActionKind::wait_input:
        if (b.input_final(x.a.offset)) break;
        if (!b.input_written_elsewhere)
          fail("a blocking run reached input from element {} that is not final yet", x.a.offset);
        // Sleeps until the writer moves the watermark (it notifies each move; wait(seen) returns at
        // once if it moved since it was read): no polling, so a writer sharing this core loses nothing.
        for (std::size_t seen = b.input_final_from->load(std::memory_order_acquire); seen > b.input_offset + x.a.offset;
             seen = b.input_final_from->load(std::memory_order_acquire))
          b.input_final_from->wait(seen, std::memory_order_acquire);
        break;
      case ActionKind::reduce:  // no default: the compiler names a kind a switch misses
      case ActionKind::reduce_into:
      case ActionKind::copy:
      case ActionKind::stream_copy:
      case ActionKind::scale:
        run_local(x, p, b, t);
        break;
    }
  }
  if (seg) seg->end_run(b.channel);
}

void ProgressedRun::start(const Program& p, const Bindings& b, Transport& t) {
  if (!t.can_progress()) fail("the {} transport cannot advance a schedule without blocking", t.name());
  program_ = &p;
  bind_ = b;
  t_ = &t;
  pc_ = events_ = 0;
  requests_.fill(Request{});
  own_[0] = own_[1] = Request{};
  stuck_ = nullptr;
  posted_ = ended_ = false;
  begin_signals(p, b, signal_base_);
}

void* ProgressedRun::at(const Span& s) const { return address(bind_, s, program_->shape.dtype); }

bool ProgressedRun::test(Request& r) {
  if (!r.pending()) return true;
  if (!poll_ || !t_->test(r)) {
    stuck_ = &r;
    return false;
  }
  ++events_;
  return true;
}

// The one request of a blocking send, receive or library call.
Request ProgressedRun::post_one(const Action& x) {
  const Program& p = *program_;
  const Dtype d = p.shape.dtype;
  switch (x.kind) {
    case ActionKind::send:
      return t_->post_send(at(x.a), x.a.count, d, x.peer, p.tag);
    case ActionKind::recv:
      return t_->post_recv(at(x.a), x.a.count, d, x.peer, p.tag);
    case ActionKind::library_allreduce:
      return t_->post_library_allreduce(at(x.b), at(x.a), x.a.count, d, p.shape.op);
    case ActionKind::library_collective:
      return t_->post_library_collective(p.shape.call(), at(x.b), at(x.a), d, p.shape.op);
    default:
      fail("action {} is not a blocking call of one request", int(x.kind));
  }
}

bool ProgressedRun::advance(bool poll) {
  if (!program_) fail("ProgressedRun::advance before start");
  poll_ = poll;
  stuck_ = nullptr;
  const Program& p = *program_;
  const Dtype d = p.shape.dtype;
  Transport& t = *t_;
  while (pc_ < p.actions.size()) {
    const Action& x = p.actions[pc_];
    // A blocking action posts once, then is tested until its requests complete.
    const bool first = !posted_;
    switch (x.kind) {
      case ActionKind::post_send:
        requests_[std::size_t(x.slot)] = t.post_send(at(x.a), x.a.count, d, x.peer, p.tag);
        ++events_;
        break;
      case ActionKind::post_recv:
        requests_[std::size_t(x.slot)] = t.post_recv(at(x.a), x.a.count, d, x.peer, p.tag);
        ++events_;
        break;
      case ActionKind::wait:
        if (!test(requests_[std::size_t(x.slot)])) return false;
        break;
      case ActionKind::send:
      case ActionKind::recv:
      case ActionKind::library_allreduce:
      case ActionKind::library_collective:
        if (first) {
          own_[0] = post_one(x);
          posted_ = true;
          ++events_;
        }
        if (!test(own_[0])) return false;
        break;
      case ActionKind::sendrecv:
        if (first) {
          own_[1] = t.post_recv(at(x.b), x.b.count, d, x.source(), p.tag);
          own_[0] = t.post_send(at(x.a), x.a.count, d, x.peer, p.tag);
          posted_ = true;
          events_ += 2;
        }
        // Both tested every time: each completes on its own.
        if (!(test(own_[1]) & test(own_[0]))) return false;
        break;
      case ActionKind::signal:
        bind_.segment->signal(signal_base_ + std::uint64_t(x.slot + 1), bind_.channel);
        break;
      case ActionKind::wait_signals:
        if (!bind_.segment->all_reached(signal_base_ + std::uint64_t(x.slot + 1), bind_.channel)) return false;
        ++events_;
        break;
      case ActionKind::wait_input:
        if (!bind_.input_final(x.a.offset)) return false;
        break;
      case ActionKind::reduce:
      case ActionKind::reduce_into:
      case ActionKind::copy:
      case ActionKind::stream_copy:
      case ActionKind::scale:
        run_local(x, p, bind_, t);
        break;
    }
    posted_ = false;
    ++pc_;
  }
  if (p.signals > 0 && !ended_) {
    bind_.segment->end_run(bind_.channel);
    ended_ = true;
  }
  return true;
}

}  // namespace sp::coll
