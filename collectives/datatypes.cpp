// Element types, reduction operators and the local (on-node) reduction every algorithm uses.
#include "collectives/datatypes.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>

#include "bf16.hpp"
#include "core/run/error.hpp"

namespace sp::coll {
namespace {

constexpr std::array kDtypeNames{"f32", "f64", "i32", "bf16"};
constexpr std::array kOpNames{"sum", "max", "min"};

// out may be a (a fold in place); no other overlap.
template <typename T, typename F>
void combine(void* out, const void* a, const void* b, std::size_t n, F f) {
  T* o = static_cast<T*>(out);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
}

template <typename T>
void reduce_typed(void* out, const void* a, const void* b, std::size_t n, Op o) {
  switch (o) {
    case Op::sum:
      return combine<T>(out, a, b, n, [](T x, T y) { return T(x + y); });
    case Op::max:
      return combine<T>(out, a, b, n, [](T x, T y) { return std::max(x, y); });
    case Op::min:
      return combine<T>(out, a, b, n, [](T x, T y) { return std::min(x, y); });
  }
}

}  // namespace

std::string_view name(Dtype d) { return kDtypeNames[static_cast<int>(d)]; }
std::string_view name(Op o) { return kOpNames[static_cast<int>(o)]; }

Dtype parse_dtype(std::string_view s) {
  for (std::size_t i = 0; i < kDtypeNames.size(); ++i)
    if (s == kDtypeNames[i]) return static_cast<Dtype>(i);
  fail("unknown dtype '{}' (choose f32, f64, i32, bf16)", s);
}

Op parse_op(std::string_view s) {
  for (std::size_t i = 0; i < kOpNames.size(); ++i)
    if (s == kOpNames[i]) return static_cast<Op>(i);
  fail("unknown reduction op '{}' (choose sum, max, min)", s);
}

std::size_t size_of(Dtype d) { return per_dtype<std::size_t>(d, 4, 8, 4, 2); }

MPI_Datatype transport_type(Dtype d) {
  return per_dtype<MPI_Datatype>(d, MPI_FLOAT, MPI_DOUBLE, MPI_INT32_T, MPI_UINT16_T);
}

void unknown_dtype(Dtype d) { fail("unknown dtype (value {})", static_cast<int>(d)); }

void reduce_local(void* inout, const void* in, std::size_t count, Dtype d, Op o) {
  reduce_local_into(inout, inout, in, count, d, o);
}

void reduce_local_into(void* out, const void* a, const void* b, std::size_t count, Dtype d, Op o) {
  switch (d) {
    case Dtype::f32:
      return reduce_typed<float>(out, a, b, count, o);
    case Dtype::f64:
      return reduce_typed<double>(out, a, b, count, o);
    case Dtype::i32:
      // Sum through uint32 so overflow wraps instead of being undefined behaviour.
      if (o == Op::sum) return reduce_typed<std::uint32_t>(out, a, b, count, o);
      return reduce_typed<std::int32_t>(out, a, b, count, o);
    case Dtype::bf16: {
      auto* z = static_cast<std::uint16_t*>(out);
      const auto* u = static_cast<const std::uint16_t*>(a);
      const auto* v = static_cast<const std::uint16_t*>(b);
      for (std::size_t i = 0; i < count; ++i) {
        float x = bf16_to_float(u[i]), y = bf16_to_float(v[i]);
        float r = o == Op::sum ? x + y : o == Op::max ? std::max(x, y) : std::min(x, y);
        z[i] = float_to_bf16(r);
      }
      return;
    }
  }
}

bool is_floating(Dtype d) { return d != Dtype::i32; }

void scale_local(void* data, std::size_t count, Dtype d, double factor) {
  switch (d) {
    case Dtype::f32: {
      auto* a = static_cast<float*>(data);
      const auto f = float(factor);
      for (std::size_t i = 0; i < count; ++i) a[i] *= f;
      return;
    }
    case Dtype::f64: {
      auto* a = static_cast<double*>(data);
      for (std::size_t i = 0; i < count; ++i) a[i] *= factor;
      return;
    }
    case Dtype::bf16: {
      auto* a = static_cast<std::uint16_t*>(data);
      const auto f = float(factor);
      for (std::size_t i = 0; i < count; ++i) a[i] = float_to_bf16(bf16_to_float(a[i]) * f);
      return;
    }
    case Dtype::i32:
      break;
  }
  fail("scaling {} elements: only floating-point results are scaled", name(d));
}

std::size_t count_mismatches(const void* got, const void* want, std::size_t count, Dtype d) {
  const auto* a = static_cast<const unsigned char*>(got);
  const auto* b = static_cast<const unsigned char*>(want);
  std::size_t es = size_of(d), wrong = 0;
  for (std::size_t i = 0; i < count; ++i) wrong += std::memcmp(a + i * es, b + i * es, es) != 0;
  return wrong;
}

}  // namespace sp::coll
