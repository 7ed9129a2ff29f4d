// The collectives scaleprobe measures, each described once: its name, the library call it is compared
// with, how many elements each rank sends and receives for a message, nccl-tests' bus-bandwidth
// factor, and what every rank must hold afterwards (the verification's reference, from the
// harness's pattern: harness.hpp). An algorithm (allreduce.hpp's Algorithm) implements one of them.
//
// A message of `count` elements is nccl-tests' size: the whole buffer an allreduce, reduce,
// broadcast or all-to-all rank sends, the whole buffer a reduce-scatter rank sends and an all-gather
// rank receives. The block collectives (reduce-scatter, all-gather, all-to-all) move count / nranks
// elements per rank pair, so their count is a multiple of the ranks (usable_count rounds down).
// Broadcast runs in one buffer, as MPI_Bcast does: the root's input, every other rank's output.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "collectives/datatypes.hpp"

namespace sp::coll {

enum class Collective : std::uint8_t { allreduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all };

struct CollectiveInfo {
  Collective id;
  std::string_view name;          // command-line name (collective_perf -c)
  std::string_view library_call;  // the MPI call it is compared with
  bool reduces;                   // combines the ranks' data with an op
  bool rooted;                    // has a root (broadcast, reduce)
  bool blocked;                   // moves count / nranks per rank pair
  bool one_buffer;                // in place: send == recv (broadcast)
  std::string_view busbw_formula; // busbw = algbw x this (nccl-tests' PERFORMANCE.md)
  double busbw_factor(int nranks) const;
};

const CollectiveInfo& info(Collective c);
const CollectiveInfo& find_collective(std::string_view name);  // sp::Error listing the choices
std::string collective_names();                                 // "allreduce, reduce_scatter, ..."

// count rounded down to what one call of c on nranks moves (a multiple of nranks for the blocked ones).
std::size_t usable_count(Collective c, std::size_t count, int nranks);
// Elements of each rank's send and receive buffers for a message of count (usable) elements.
std::size_t send_count(Collective c, std::size_t count, int nranks);
std::size_t recv_count(Collective c, std::size_t count, int nranks);

// Verification (harness.hpp's pattern, exact in every dtype): rank's input, and what its receive
// buffer must hold after the call; output_checked is false where the collective leaves it undefined
// (a reduce's non-root ranks).
void fill_input(Collective c, void* buf, std::size_t count, Dtype d, int rank, int nranks);
void fill_output_expected(Collective c, void* buf, std::size_t count, Dtype d, Op o, int rank, int nranks, int root);
bool output_checked(Collective c, int rank, int root);

}  // namespace sp::coll
