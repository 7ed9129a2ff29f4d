// bucket_sweep's cases and output. One case: a gradient layout packed into DDP buckets under one
// cap, and one call = the allreduce of every bucket in backward order. Its rows' columns are
// declared once (trace, JSON and the printed table); a second table has one row per bucket.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/buckets.hpp"
#include "collectives/bench/driver.hpp"

namespace sp::coll {

inline constexpr std::size_t kBucketChunkBytes = 1 << 20;  // pipelining segment of ring and tree

// The gradients and their verification pattern in one transport's memory (host or device), shared
// by an algorithm's cases.
struct GradientBuffers {
  GradientBuffers(Transport& t, std::size_t n, Dtype dt, int rank, int nranks);
  Transport& transport;
  TransportBuffer pattern, grads;
};

class BucketCase : public BenchCase {
 public:
  // want: the expected result in host memory (fill_expected); samples: where the timed calls'
  // per-bucket samples go (phase 1, under case id).
  BucketCase(const Algorithm& a, std::vector<Bucket> buckets, std::size_t n, Dtype dt, GradientBuffers& g,
             Workspace& ws, const std::vector<std::byte>& want, SampleLog& samples, std::int64_t id);
  Transport& transport() override { return g_.transport; }
  void reset() override;
  std::uint64_t evict_from_cache() override;
  void call(int iter) override;
  long long verify() override;
  const std::vector<Bucket>& buckets() const { return buckets_; }
  // Collective: each bucket's time per timed call, the mean over ranks and calls.
  std::vector<double> bucket_mean_s(MPI_Comm comm, int iters) const;

 private:
  const Algorithm& algorithm_;
  std::vector<Bucket> buckets_;
  std::size_t n_;
  Dtype dt_;
  GradientBuffers& g_;
  Workspace& ws_;
  const std::vector<std::byte>& want_;
  SampleLog& samples_;
  std::int64_t id_;
  std::vector<double> bucket_time_s_;  // this rank's, summed over timed calls
};

struct BucketRow {
  std::string algorithm;
  BucketCap cap;
  std::size_t buckets = 0;
  std::uint64_t bytes = 0;  // gradient bytes per iteration
  std::string dtype;
  double busbw_factor = 0;
  CaseResult result;
  double busbw_GBps() const;
};

Columns<BucketRow> bucket_columns();

// Rank 0: the run's description and the column headers.
void print_bucket_header(const Session& s, const RunOptions& ro, const Provenance& prov, const GradientLayout& layout,
                         const std::string& dtype, const Columns<BucketRow>& columns);

// The per-bucket table's rows of one case (bucket_mean_s: BucketCase::bucket_mean_s).
void add_bucket_rows(Table& t, std::int64_t id, const BucketCase& c, const GradientLayout& layout, Dtype dt,
                     const std::vector<double>& bucket_mean_s);
// The layout swept, one row per tensor.
Table layout_table(const GradientLayout& layout);

}  // namespace sp::coll
