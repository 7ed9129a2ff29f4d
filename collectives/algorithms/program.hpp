// Schedules as step programs: what one rank of a collective does, written down as data — the
// sends, receives, waits and local reductions, in order, grouped into the schedule's steps — and
// run by an executor. The same program runs
//  - blocking (run_blocking): every action in order, each wait a blocking one: what the
//    benchmarks time, call for call the transport calls the schedules always made;
//  - progressed (ProgressedRun): as far as it can without blocking, resumed by the next call —
//    the data-parallel engine advances the buckets in flight from the compute thread between
//    layers of backward, so communication moves without a thread of its own;
// and, being data, it can be inspected (tests count its messages and steps without running it).
//
// A program is built for one Shape (count, dtype, op, rank, ranks, pipelining chunk, in place or
// not) and refers to memory as spans of three buffers, bound when it runs: the caller's send and
// recv buffers and a scratch buffer of scratch_elements the caller provides. So one program serves
// every call of the same shape (the timed loop builds it once).
#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "collectives/collective.hpp"
#include "collectives/datatypes.hpp"
#include "collectives/transports/transport.hpp"

namespace sp::coll {

// segment: a local rank's staging memory in the node's shared segment (node_segment.hpp).
enum class Buffer : std::uint8_t { send, recv, scratch, segment };

// count elements from element offset of one buffer. owner >= 0: local rank owner's — its staging
// memory, or its copy of the call's send or receive buffer when those lie in the segment's arena.
struct Span {
  Buffer buffer = Buffer::recv;
  std::size_t offset = 0;
  std::size_t count = 0;
  int owner = -1;
  bool operator==(const Span&) const = default;
};

enum class ActionKind : std::uint8_t {
  post_send,           // start sending a to peer; its request goes to slot
  post_recv,           // start receiving into a from peer; slot
  wait,                // complete the request in slot
  send,                // post_send + wait, one blocking call (MPI_Send where the library has it)
  recv,                // post_recv + wait, one blocking call
  sendrecv,            // send a to peer while receiving b from source(), one blocking call
  reduce,              // a[i] = op(a[i], b[i])
  reduce_into,         // a[i] = op(b[i], c[i]): the first reduction of a block, straight from the input
  copy,                // a = b
  stream_copy,         // a = b with stores past the caches (Transport::stream_copy)
  scale,               // a[i] *= the run's scale (Bindings::scale): final values of a scaled program
  library_allreduce,   // the transport library's own allreduce of b into a (the same span: in place)
  library_collective,  // the library's own call of the shape's collective, b (send) into a (recv)
  signal,              // this rank gives its signal number `slot` of the run (node segment counter)
  wait_signals,        // until every local rank has given its signal number `slot`
  wait_input,          // until this rank's input from element a.offset on is final (Bindings::input_final)
};

struct Action {
  ActionKind kind;
  int peer = -1;
  int slot = -1;
  Span a, b;
  int from = -1;  // sendrecv: the rank b comes from, when not peer (a ring step's left neighbour)
  Span c = {};    // reduce_into's second operand
  int source() const { return from >= 0 ? from : peer; }
};

// What a program is built for. tag_offset is added to the schedule's message tag, so programs of
// several calls in flight at once (buckets) never match each other's messages. rank and nranks are
// on the transport the program's messages go over; local_rank and local_ranks on the node segment
// (the same ranks for a node-local program; for the hierarchical one the transport is the rail of
// ranks with the same local rank, one per node).
struct Shape {
  std::size_t count = 0;
  Dtype dtype = Dtype::f32;
  Op op = Op::sum;
  int rank = 0, nranks = 1;
  std::size_t chunk_bytes = 1 << 20;  // pipelining segment of ring and tree; 0 = none
  bool in_place = false;
  int tag_offset = 0;
  int local_rank = 0, local_ranks = 1;
  // The caller wants the result times a factor bound at run time (the data-parallel engine's mean
  // of the gradients): a program that can scales each element where its final value is made, while
  // it is still in cache, and says so (Program::scales); otherwise the caller scales the result.
  bool scaled = false;
  Collective collective = Collective::allreduce;  // what the program computes (collective.hpp)
  int root = 0;                                   // of a rooted collective (broadcast, reduce)
  double imbalance = 0;                           // of an all-to-allv (collective.hpp)
  // Ring reduce-scatter and all-gather of a count that is not a multiple of the ranks (the sharded
  // engine's buckets): blocks as Blocks{count, nranks, first_larger_block} (blocks.hpp). In place,
  // a reduce-scatter's recv is this rank's own block of send and an all-gather's send is already
  // this rank's block of recv (MPI_IN_PLACE's meaning for MPI_Allgather).
  std::size_t first_larger_block = 0;
  CollectiveCall call() const { return {collective, count, root, imbalance}; }
  bool operator==(const Shape&) const = default;
};

// Requests a program may have in flight at once (tree: 4 from its children and 1 to its parent).
constexpr int kMaxRequests = 8;

struct Program {
  Shape shape;
  int tag = 0;  // of every message
  std::vector<Action> actions;
  std::vector<std::uint32_t> steps;  // index of each step's first action
  int slots = 0;                     // request slots the actions use
  std::size_t scratch_elements = 0;
  int signals = 0;               // signal actions (a node-local program's synchronisation)
  bool waits_input = false;      // has wait_input actions: can start before its input is final
  bool scales = false;           // its result comes out times Bindings::scale (Shape::scaled)
  std::size_t messages() const;  // sends and receives (a sendrecv counts two)
};

// How an algorithm writes its program: allocates request slots, keeps the steps, and knows the
// shape. Waiting on a slot nothing was posted to adds nothing (as waiting on no request).
class ProgramBuilder {
 public:
  ProgramBuilder(const Shape& s, int tag);
  const Shape& shape() const { return p_.shape; }

  void step();  // the actions that follow belong to a new step
  // Spans of the three buffers.
  Span send_buffer(std::size_t offset, std::size_t count) const { return {Buffer::send, offset, count}; }
  Span recv_buffer(std::size_t offset, std::size_t count) const { return {Buffer::recv, offset, count}; }
  Span scratch(std::size_t offset, std::size_t count);  // grows scratch_elements to cover it
  Span segment(int owner, std::size_t offset, std::size_t count) const {
    return {Buffer::segment, offset, count, owner};
  }
  Span send_buffer_of(int owner, std::size_t offset, std::size_t count) const {
    return {Buffer::send, offset, count, owner};
  }
  Span recv_buffer_of(int owner, std::size_t offset, std::size_t count) const {
    return {Buffer::recv, offset, count, owner};
  }

  int post_send(Span data, int peer);  // returns the request slot
  int post_recv(Span data, int peer);
  void wait(int& slot);  // and sets slot to -1
  void send(Span data, int peer);
  void recv(Span data, int peer);
  void sendrecv(Span out, Span in, int peer);  // an exchange with peer
  void sendrecv(Span out, int to, Span in, int from);
  void reduce(Span into, Span from);
  // to = op(a, b): a schedule's first reduction of a block reads the input where it is, so out of
  // place nothing is copied into recv first. to == a is a plain reduce.
  void reduce_into(Span to, Span a, Span b);
  void copy(Span to, Span from);
  // A copy whose destination is not read again soon (a result larger than the core's caches):
  // written to memory without first being read into the cache.
  void stream_copy(Span to, Span from);
  // For a scaled shape: the span holds final values of the call, to be scaled (nothing otherwise);
  // scales_result() says the program scales every element of its result (some rank's scale()).
  void scale(Span final_values);
  void scales_result();
  void library_allreduce();
  // The library's own call of the shape's collective (library_allreduce for an allreduce).
  void library_call();
  // Node-local synchronisation: signal() returns the signal's number; wait_signals(k) waits for
  // every local rank's signal k (a rank's signals are given in order, so also for all before it).
  int signal();
  void wait_signals(int k);
  // Waits until every local rank has finished the runs before this one (no signal of its own).
  void wait_previous_runs();
  // Waits until this rank's input from element offset to the end is final. A program that
  // consumes its input from the end, as backward produces gradients, can then start on a buffer
  // still being written (the data-parallel engine's streamed buckets); unbound, it waits for nothing.
  void wait_input(std::size_t offset);
  // Appends program sub (built for a shape of its own, on the same transport) as steps of this
  // one, its receive buffer being this one's from element recv_offset: a schedule run on one slice
  // of the buffer. Its messages take this program's tag; no request of this one may be in flight.
  void append(const Program& sub, std::size_t recv_offset);

  // The start of the schedules that build their result in recv: nothing for no elements, the
  // input copied into recv unless in place; false when that completes the call (no elements, or
  // a single rank). Elements [skip_offset, skip_offset + skip_count) are not copied when other
  // ranks share the call: the schedule sends them from input() and overwrites them unread.
  bool begin_in_recv(std::size_t skip_offset = 0, std::size_t skip_count = 0);
  // This rank's input, elements [offset, offset + count): the send buffer out of place, recv in
  // place. Input a schedule sends before changing it goes from here: out of place those lines are
  // clean, where begin_in_recv's copy in recv is still dirty in this core's cache, and a peer's
  // single-copy read of dirty lines (Open MPI's CMA) is slow — ring all-gather took 1.622 of
  // MPI_Allgather's time at 1 MiB on 2 ranks sending its own block from the copy, 1.001 from the
  // send buffer (results/2026-12-02-vm-f6m207-send-from-input).
  Span input(std::size_t offset, std::size_t count) const {
    return p_.shape.in_place ? recv_buffer(offset, count) : send_buffer(offset, count);
  }
  // Elements per pipelined segment: chunk_bytes over the element size (at least 1), or all
  // max_elements when chunk_bytes is 0 (no pipelining); never more than max_elements or INT_MAX.
  std::size_t segment_elements(std::size_t max_elements) const;

  Program finish();

 private:
  int acquire();
  void add(Action a);
  Program p_;
  std::vector<int> free_slots_;
};

class NodeSegment;  // node_segment.hpp

// Where a program's buffers are for one run.
struct Bindings {
  const void* send = nullptr;
  void* recv = nullptr;
  std::byte* scratch = nullptr;    // at least program.scratch_elements
  NodeSegment* segment = nullptr;  // a node-local program's (Program::signals > 0)
  int channel = 0;                 // of the segment: its counters and staging for this run
  double scale = 1.0;              // a scaled program's factor (1: its scale actions do nothing)
  // Where the caller's input is final (wait_input): every element at offset >= *input_final_from
  // of a buffer in which this call's input starts at input_offset; null: all final. Its writer
  // stores it with release order after writing the input, then notify_all()s it (a blocking run
  // waits on it). input_written_elsewhere: another thread moves it (the engine's compute thread
  // while a communication thread runs the program), so a blocking run waits for it; otherwise only
  // the thread running the program could, and a blocking run that reaches input not yet final fails.
  const std::atomic<std::size_t>* input_final_from = nullptr;
  std::size_t input_offset = 0;
  bool input_written_elsewhere = false;
  bool input_final(std::size_t offset) const {
    return !input_final_from || input_final_from->load(std::memory_order_acquire) <= input_offset + offset;
  }
};

// Runs every action in order, waiting where the program waits. A wait_input on input that is not
// final waits for another thread to make it so (Bindings::input_written_elsewhere), else fails.
void run_blocking(const Program& p, const Bindings& b, Transport& t);

// Runs a program in slices: advance() does every action it can without blocking and returns;
// the next advance() resumes there. The transport must be able to test a request
// (Transport::can_progress). The program and the bound memory must outlive the run.
class ProgressedRun {
 public:
  void start(const Program& p, const Bindings& b, Transport& t);
  // Advances as far as possible; true once every action has completed. poll = false: a pending
  // request is not tested, only stopped at (waiting_on()), for a caller that then blocks on it.
  bool advance(bool poll = true);
  // The request the last advance() stopped at, if still pending (else nullptr, as when the run
  // waits for a node segment's signals): a caller with nothing else to do blocks on it and the
  // other runs' (Transport::wait_any) instead of polling — in a simulation, a rank that polls
  // never lets simulated time pass, and every failed test costs SMPI dearly.
  Request* waiting_on() const { return stuck_ && stuck_->pending() ? stuck_ : nullptr; }
  bool done() const { return program_ && pc_ == program_->actions.size(); }
  bool started() const { return program_ != nullptr; }
  // Messages posted and requests completed so far (for tests of how far each call gets).
  std::size_t events() const { return events_; }

 private:
  bool test(Request& r);
  Request post_one(const Action& x);
  void* at(const Span& s) const;
  const Program* program_ = nullptr;
  Bindings bind_;
  Transport* t_ = nullptr;
  std::size_t pc_ = 0, events_ = 0;
  std::array<Request, kMaxRequests> requests_;  // the program's slots
  Request own_[2];                              // the current blocking action's requests, once posted
  Request* stuck_ = nullptr;                    // the request advance() last found incomplete
  bool posted_ = false;
  bool poll_ = true;               // of the advance() in progress
  std::uint64_t signal_base_ = 0;  // the node segment's counters at the start of this run
  bool ended_ = false;             // its end given to the segment
};

}  // namespace sp::coll
