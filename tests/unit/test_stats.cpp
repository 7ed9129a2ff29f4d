// Statistics over samples (core/stats). Cross-rank helpers are exercised by the MPI tests.
#include <gtest/gtest.h>

#include "core/measure/stats.hpp"

TEST(Summarize, KnownValues) {
  std::vector<double> v{5, 1, 4, 2, 3};
  sp::Summary s = sp::summarize(v);
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.p99, 4.96);  // linear interpolation between 4 and 5 at position 3.96
  EXPECT_NEAR(s.stddev, 1.5811388, 1e-6);
}

TEST(Summarize, EvenCountMedianAndEmpty) {
  std::vector<double> v{1, 2, 3, 10};
  EXPECT_DOUBLE_EQ(sp::summarize(v).median, 2.5);
  sp::Summary e = sp::summarize(std::vector<double>{});
  EXPECT_EQ(e.n, 0u);
  EXPECT_EQ(e.mean, 0);
}

TEST(Quantile, Endpoints) {
  std::vector<double> v{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(sp::quantile_sorted(v, 0), 1);
  EXPECT_DOUBLE_EQ(sp::quantile_sorted(v, 1), 4);
  EXPECT_DOUBLE_EQ(sp::quantile_sorted(v, 0.5), 2.5);
  std::vector<double> one{7};
  EXPECT_DOUBLE_EQ(sp::quantile_sorted(one, 0.99), 7);
}

TEST(Summarize, OutlierShowsInP99NotMedian) {
  std::vector<double> v(1000, 1.0);
  v[500] = 1000.0;
  sp::Summary s = sp::summarize(v);
  EXPECT_DOUBLE_EQ(s.median, 1.0);
  EXPECT_GT(s.mean, 1.9);
  EXPECT_DOUBLE_EQ(s.max, 1000.0);
}
