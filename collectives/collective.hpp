// The collectives scaleprobe measures, each described once: its name, the library call it is compared
// with, how many elements each rank sends and receives for a message, nccl-tests' bus-bandwidth
// factor, and what every rank must hold afterwards (the verification's reference, from the
// verification pattern: pattern.hpp). An algorithm (algorithms/allreduce.hpp's Algorithm) implements one of them.
//
// A message of `count` elements is nccl-tests' size: the whole buffer an allreduce, reduce,
// broadcast or all-to-all rank sends, the whole buffer a reduce-scatter rank sends and an all-gather
// rank receives. The block collectives (reduce-scatter, all-gather, all-to-all) move count / nranks
// elements per rank pair, so their count is a multiple of the ranks (usable_count rounds down).
// Broadcast runs in one buffer, as MPI_Bcast does: the root's input, every other rank's output.
// All-to-allv moves blocks of declared unequal sizes: with imbalance f (0 <= f < 1) every rank sends
// rank j floor(count/p x w_j) elements, w_j rising linearly from 1 - f (rank 0) to 1 + f (rank
// p-1): the receivers' loads differ as a mixture of experts' do, the largest (1 + f) times the mean.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "collectives/datatypes.hpp"

namespace sp::coll {

enum class Collective : std::uint8_t {
  allreduce,
  reduce_scatter,
  all_gather,
  broadcast,
  reduce,
  all_to_all,
  all_to_allv
};

struct CollectiveInfo {
  Collective id;
  std::string_view name;           // command-line name (collective_perf -c)
  std::string_view library_call;   // the MPI call it is compared with
  bool reduces;                    // combines the ranks' data with an op
  bool rooted;                     // has a root (broadcast, reduce)
  bool blocked;                    // moves count / nranks per rank pair
  bool one_buffer;                 // in place: send == recv (broadcast)
  std::string_view busbw_formula;  // busbw = algbw x this (nccl-tests' PERFORMANCE.md)
  double busbw_factor(int nranks) const;
};

const CollectiveInfo& info(Collective c);
const CollectiveInfo& find_collective(std::string_view name);  // sp::Error listing the choices
std::string collective_names();                                // "allreduce, reduce_scatter, ..."

// count rounded down to what one call of c on nranks moves (a multiple of nranks for the blocked ones).
std::size_t usable_count(Collective c, std::size_t count, int nranks);

// One call: the collective, the message (usable_count elements), the root of a rooted one and the
// imbalance of an all-to-allv.
struct CollectiveCall {
  Collective collective = Collective::allreduce;
  std::size_t count = 0;
  int root = 0;
  double imbalance = 0;
};
// Elements of rank's send and receive buffers.
struct CallCounts {
  std::size_t send = 0, recv = 0;
};
CallCounts call_counts(const CollectiveCall& c, int nranks, int rank);
// All-to-allv: the elements each rank sends to rank `to`, and where they start in its send buffer
// (the blocks in rank order); rank r receives block(r) from every rank, rank q's at q x block(r).
std::size_t v_block(const CollectiveCall& c, int nranks, int to);
std::size_t v_displacement(const CollectiveCall& c, int nranks, int to);

// Verification (pattern.hpp, exact in every dtype): rank's input, and what its receive
// buffer must hold after the call; output_checked is false where the collective leaves it undefined
// (a reduce's non-root ranks).
void fill_input(const CollectiveCall& c, void* buf, Dtype d, int rank, int nranks);
void fill_output_expected(const CollectiveCall& c, void* buf, Dtype d, Op o, int rank, int nranks);
bool output_checked(const CollectiveCall& c, int rank);

}  // namespace sp::coll
