// The allreduce algorithm interface. Each algorithm is one small .cpp file that defines a function
// with the AllreduceFn signature and registers it in registry.cpp; the benchmark harness
// (allreduce_perf.cpp, bucket_sweep.cpp) owns timing, warm-up, verification and output.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sp::coll {

enum class Dtype { f32, f64, i32, bf16 };
enum class Op { sum, max, min };

std::string_view name(Dtype d);
std::string_view name(Op o);
Dtype parse_dtype(std::string_view s);  // throws sp::Error naming the bad value
Op parse_op(std::string_view s);
std::size_t size_of(Dtype d);
// The MPI datatype used to move elements point to point. bf16 travels as MPI_UINT16_T.
MPI_Datatype transport_type(Dtype d);

// inout[i] = op(inout[i], in[i]) for i < count. int32 sum wraps (two's complement), never UB.
void reduce_local(void* inout, const void* in, std::size_t count, Dtype d, Op o);

// Scratch memory an algorithm may use; owned by the caller and reused across calls so the timed
// loop never allocates. get() may move the buffer when it grows; contents are not preserved.
class Workspace {
 public:
  std::byte* get(std::size_t bytes) {
    if (buffer_.size() < bytes) buffer_.resize(bytes);
    return buffer_.data();
  }
 private:
  std::vector<std::byte> buffer_;
};

struct AllreduceArgs {
  const void* send;   // == recv for in place
  void* recv;
  std::size_t count;  // elements, may be 0 and may be smaller than the number of ranks
  Dtype dtype;
  Op op;
  MPI_Comm comm;
  Workspace* workspace;
  std::size_t chunk_bytes = 1 << 20;  // pipelining segment for ring and tree; 0 = no pipelining
};

// Every rank calls it with identical count/dtype/op; on return recv holds the reduction on every
// rank. Errors are reported by throwing sp::Error.
using AllreduceFn = void (*)(const AllreduceArgs&);

struct Algorithm {
  std::string_view name;         // command-line name, e.g. "ring"
  std::string_view description;  // one line for --help and the README
  AllreduceFn run;
};

// The start every algorithm that builds its result in recv shares (tree, ring, rabenseifner):
// learns rank and size, and copies the input into recv unless in place. Returns false when that
// already completed the call (no elements, or a single rank).
bool begin_in_recv(const AllreduceArgs& a, int& rank, int& nranks);

// All registered algorithms, reference (MPI library) first.
std::span<const Algorithm> algorithms();
const Algorithm& find_algorithm(std::string_view name);  // throws sp::Error listing the choices

// The algorithms (one file each).
void allreduce_mpi(const AllreduceArgs& a);           // mpi_builtin.cpp: MPI_Allreduce
void allreduce_naive(const AllreduceArgs& a);         // naive.cpp
void allreduce_tree(const AllreduceArgs& a);          // tree.cpp
void allreduce_ring(const AllreduceArgs& a);          // ring.cpp
void allreduce_rabenseifner(const AllreduceArgs& a);  // rabenseifner.cpp

}  // namespace sp::coll
