// The local reduction every algorithm relies on, and bf16 conversion.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "collectives/algorithms/allreduce.hpp"
#include "collectives/bf16.hpp"
#include "core/run/error.hpp"

using namespace sp::coll;

TEST(ReduceLocal, FloatOps) {
  float a[3] = {1, -2, 3}, b[3] = {4, 5, -6};
  float s[3] = {1, -2, 3};
  reduce_local(s, b, 3, Dtype::f32, Op::sum);
  EXPECT_EQ(s[0], 5);
  EXPECT_EQ(s[1], 3);
  EXPECT_EQ(s[2], -3);
  float mx[3] = {1, -2, 3};
  reduce_local(mx, b, 3, Dtype::f32, Op::max);
  EXPECT_EQ(mx[1], 5);
  EXPECT_EQ(mx[2], 3);
  reduce_local(a, b, 3, Dtype::f32, Op::min);
  EXPECT_EQ(a[0], 1);
  EXPECT_EQ(a[2], -6);
}

TEST(ReduceLocal, DoubleAndCountZero) {
  double a[2] = {0.5, 1e300}, b[2] = {0.25, 1e300};
  reduce_local(a, b, 0, Dtype::f64, Op::sum);
  EXPECT_EQ(a[0], 0.5);
  reduce_local(a, b, 2, Dtype::f64, Op::sum);
  EXPECT_EQ(a[0], 0.75);
  EXPECT_EQ(a[1], 2e300);
}

TEST(ReduceLocal, Int32SumWrapsInsteadOfUndefinedBehaviour) {
  std::int32_t a[1] = {std::numeric_limits<std::int32_t>::max()}, b[1] = {1};
  reduce_local(a, b, 1, Dtype::i32, Op::sum);
  EXPECT_EQ(a[0], std::numeric_limits<std::int32_t>::min());
  std::int32_t c[2] = {-5, 7}, d[2] = {3, -9};
  reduce_local(c, d, 2, Dtype::i32, Op::min);
  EXPECT_EQ(c[0], -5);
  EXPECT_EQ(c[1], -9);
}

// The schedules' first reductions (reduce_into): out = a op b leaves both operands alone, and out
// may be a (a plain reduce), for every dtype.
TEST(ReduceLocal, IntoAThirdBufferLeavesBothOperands) {
  float a[3] = {1, -2, 3}, b[3] = {4, 5, -6}, out[3] = {9, 9, 9};
  reduce_local_into(out, a, b, 3, Dtype::f32, Op::max);
  EXPECT_EQ(out[0], 4);
  EXPECT_EQ(out[1], 5);
  EXPECT_EQ(out[2], 3);
  EXPECT_EQ(a[1], -2);
  EXPECT_EQ(b[2], -6);
  double x[2] = {0.5, 1}, y[2] = {0.25, 2};
  reduce_local_into(x, x, y, 2, Dtype::f64, Op::sum);
  EXPECT_EQ(x[0], 0.75);
  EXPECT_EQ(x[1], 3);
  std::int32_t i[1] = {std::numeric_limits<std::int32_t>::max()}, j[1] = {1}, k[1] = {0};
  reduce_local_into(k, i, j, 1, Dtype::i32, Op::sum);
  EXPECT_EQ(k[0], std::numeric_limits<std::int32_t>::min());
  std::uint16_t u[1] = {float_to_bf16(3)}, v[1] = {float_to_bf16(-7)}, w[1] = {0};
  reduce_local_into(w, u, v, 1, Dtype::bf16, Op::min);
  EXPECT_EQ(bf16_to_float(w[0]), -7.0f);
  EXPECT_EQ(bf16_to_float(u[0]), 3.0f);
}

TEST(Bf16, RoundTripAndRounding) {
  for (float f : {0.0f, 1.0f, -2.5f, 256.0f, -8.0f}) EXPECT_EQ(bf16_to_float(float_to_bf16(f)), f);
  // 1 + 2^-8 is halfway between bf16 neighbours 1 and 1+2^-7: ties to even -> 1.
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f + 1.0f / 256)), 1.0f);
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f + 3.0f / 256)), 1.0f + 1.0f / 64);
  std::uint16_t x[2] = {float_to_bf16(3), float_to_bf16(-1)}, y[2] = {float_to_bf16(4), float_to_bf16(-7)};
  reduce_local(x, y, 2, Dtype::bf16, Op::sum);
  EXPECT_EQ(bf16_to_float(x[0]), 7.0f);
  EXPECT_EQ(bf16_to_float(x[1]), -8.0f);
}

TEST(Names, ParseAndPrint) {
  for (Dtype d : {Dtype::f32, Dtype::f64, Dtype::i32, Dtype::bf16}) EXPECT_EQ(parse_dtype(name(d)), d);
  for (Op o : {Op::sum, Op::max, Op::min}) EXPECT_EQ(parse_op(name(o)), o);
  EXPECT_THROW(parse_dtype("f16"), sp::Error);
  EXPECT_THROW(parse_op("prod"), sp::Error);
  EXPECT_EQ(size_of(Dtype::bf16), 2u);
  EXPECT_THROW(find_algorithm("butterfly"), sp::Error);
  EXPECT_EQ(algorithms().front().name, "mpi");
}
