// Element types and reduction operators, and the local (on-node) reduction every schedule uses
// (datatypes.cpp).
#pragma once
#include <mpi.h>

#include <cstddef>
#include <string_view>

namespace sp::coll {

enum class Dtype { f32, f64, i32, bf16 };
enum class Op { sum, max, min };

std::string_view name(Dtype d);
std::string_view name(Op o);
Dtype parse_dtype(std::string_view s);  // throws sp::Error naming the bad value
Op parse_op(std::string_view s);
std::size_t size_of(Dtype d);

[[noreturn]] void unknown_dtype(Dtype d);  // throws sp::Error: d is none of Dtype's values
// The one of four values, given in Dtype's order, that stands for d: a table of per-dtype values
// in one line, such as per_dtype<MPI_Datatype>(d, MPI_FLOAT, MPI_DOUBLE, MPI_INT32_T, MPI_UINT16_T).
template <typename T>
T per_dtype(Dtype d, T f32, T f64, T i32, T bf16) {
  switch (d) {
    case Dtype::f32:
      return f32;
    case Dtype::f64:
      return f64;
    case Dtype::i32:
      return i32;
    case Dtype::bf16:
      return bf16;
  }
  unknown_dtype(d);
}

// The MPI datatype used to move elements point to point. bf16 travels as MPI_UINT16_T.
MPI_Datatype transport_type(Dtype d);

// inout[i] = op(inout[i], in[i]) for i < count. int32 sum wraps (two's complement), never UB.
void reduce_local(void* inout, const void* in, std::size_t count, Dtype d, Op o);
// out[i] = op(a[i], b[i]): one pass where a copy of a followed by reduce_local would make two. out
// may be a; it overlaps neither otherwise.
void reduce_local_into(void* out, const void* a, const void* b, std::size_t count, Dtype d, Op o);
// data[i] *= factor for i < count: the mean of a sum (floating-point dtypes only; i32 throws).
void scale_local(void* data, std::size_t count, Dtype d, double factor);
bool is_floating(Dtype d);
// Elements i < count whose bytes differ between got and want (host memory). The verification's
// inputs are exact small integers, so a correct result matches bit for bit.
std::size_t count_mismatches(const void* got, const void* want, std::size_t count, Dtype d);

}  // namespace sp::coll
