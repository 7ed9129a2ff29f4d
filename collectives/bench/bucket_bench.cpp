#include "collectives/bench/bucket_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "core/measure/cache_flush.hpp"
#include "core/run/error.hpp"
#include "core/run/sizes.hpp"

namespace sp::coll {

namespace {
std::size_t buffer_bytes(std::size_t n, Dtype dt) { return std::max<std::size_t>(n * size_of(dt), 1); }
}  // namespace

// Every call, timed or not, starts from the verification pattern (copied back untimed), so the
// timed allreduces reduce non-zero data and repeated in-place sums never grow.
GradientBuffers::GradientBuffers(Transport& t, std::size_t n, Dtype dt, int rank, int nranks)
    : transport(t),
      pattern(filled_buffer(t, buffer_bytes(n, dt), [&](std::byte* p) { fill_pattern(p, n, dt, rank, nranks); })),
      grads(t.allocate(buffer_bytes(n, dt))) {}

BucketCase::BucketCase(const Algorithm& a, std::vector<Bucket> buckets, std::size_t n, Dtype dt, GradientBuffers& g,
                       Workspace& ws, const std::vector<std::byte>& want, SampleLog& samples, std::int64_t id)
    : algorithm_(a),
      buckets_(std::move(buckets)),
      n_(n),
      dt_(dt),
      g_(g),
      ws_(ws),
      want_(want),
      samples_(samples),
      id_(id),
      bucket_time_s_(buckets_.size(), 0.0) {}

void BucketCase::reset() {
  g_.transport.copy(g_.grads.data(), g_.pattern.data(), g_.grads.size());
  g_.transport.synchronize();
}

std::uint64_t BucketCase::evict_from_cache() {
  if (g_.transport.on_device()) return 0;
  flush_from_cache(g_.grads.data(), g_.grads.size());
  return g_.grads.size();
}

void BucketCase::call(int iter) {
  PhaseTimer one;
  auto* base = static_cast<std::byte*>(g_.grads.data());
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    void* p = base + buckets_[b].offset * size_of(dt_);
    one.start();
    algorithm_.run({p, p, buckets_[b].numel, dt_, Op::sum, &g_.transport, &ws_, kBucketChunkBytes});
    g_.transport.synchronize();  // a device transport's bucket has finished on the device, not only been queued
    const PhaseSample s = one.stop();
    if (iter >= 0) {
      samples_.add(id_, iter, 1, static_cast<std::int64_t>(b), s);
      bucket_time_s_[b] += s.wall_s;
    }
  }
}

long long BucketCase::verify() {
  reset();
  call(-1);
  TransportBuffer want_on_device;  // the expected result where a device transport compares
  if (g_.transport.on_device()) {
    want_on_device = g_.transport.allocate(g_.grads.size());
    g_.transport.from_host(want_on_device.data(), want_.data(), g_.grads.size());
  }
  const void* expected = g_.transport.on_device() ? want_on_device.data() : want_.data();
  return static_cast<long long>(g_.transport.count_mismatches(g_.grads.data(), expected, n_, dt_));
}

std::vector<double> BucketCase::bucket_mean_s(MPI_Comm comm, int iters) const {
  int nranks = 1;
  SP_MPI_CHECK(MPI_Comm_size(comm, &nranks));
  std::vector<double> mine(bucket_time_s_.size()), sum(bucket_time_s_.size());
  for (std::size_t b = 0; b < mine.size(); ++b) mine[b] = bucket_time_s_[b] / iters;
  if (!mine.empty())
    SP_MPI_CHECK(MPI_Allreduce(mine.data(), sum.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_SUM, comm));
  for (double& t : sum) t /= nranks;
  return sum;
}

double BucketRow::busbw_GBps() const {
  const double t = result.stats.mean.mean;
  return t > 0 ? double(bytes) / t / 1e9 * busbw_factor : 0;
}

Columns<BucketRow> bucket_columns() {
  using R = BucketRow;
  auto i64 = [](auto v) { return CellValue(static_cast<std::int64_t>(v)); };
  auto ms = [](double s) { return fixed(s * 1e3, 3); };
  const auto& st = [](const R& r) -> const CaseStats& { return r.result.stats; };
  Columns<R> c;
  c.table = {
      {"case", "", "case id (samples.case refers to it)", [=](const R& r) { return i64(r.result.id); }},
      {"algorithm", "", "allreduce algorithm", [](const R& r) { return CellValue(r.algorithm); }},
      {"cap", "", "bucket cap: MiB, 'tensor' or 'all'", [](const R& r) { return CellValue(r.cap.label); }},
      {"cap_bytes", "B", "cap of buckets after the first",
       [=](const R& r) { return i64(std::min<std::size_t>(r.cap.cap_bytes, INT64_MAX)); }},
      {"first_cap_bytes", "B", "cap of the first bucket",
       [=](const R& r) { return i64(std::min<std::size_t>(r.cap.first_bytes, INT64_MAX)); }},
      {"buckets", "", "number of buckets", [=](const R& r) { return i64(r.buckets); }},
      {"bytes", "B", "gradient bytes per iteration", [=](const R& r) { return i64(r.bytes); }},
      {"dtype", "", "gradient element type", [](const R& r) { return CellValue(r.dtype); }},
      {"iters", "", "timed iterations", [=](const R& r) { return i64(r.result.iters); }},
  };
  for (auto& t : timing_table_columns<R>("iteration")) c.table.push_back(std::move(t));
  c.table.insert(c.table.end(), {
                                    {"busbw_GBps", "GB/s", "bytes / t_mean * 2(n-1)/n",
                                     [](const R& r) { return CellValue(r.busbw_GBps()); }},
                                    {"wrong", "", "elements wrong in verification, summed over ranks",
                                     [=](const R& r) { return i64(r.result.wrong); }},
                                });
  c.printed = {
      {"algorithm", 11, [](const R& r) { return r.algorithm; }},
      {"cap(MiB)", 8, [](const R& r) { return r.cap.label; }},
      {"buckets", 7, [](const R& r) { return std::to_string(r.buckets); }},
      {"t_min(ms)", 11, [=](const R& r) { return ms(st(r).mean.min); }},
      {"t_mean(ms)", 11, [=](const R& r) { return ms(st(r).mean.mean); }},
      {"t_max(ms)", 11, [=](const R& r) { return ms(st(r).mean.max); }},
      {"p50(ms)", 11, [=](const R& r) { return ms(st(r).iteration.median); }},
      {"p99(ms)", 11, [=](const R& r) { return ms(st(r).iteration.p99); }},
      {"bucket(ms)", 11,
       [=](const R& r) { return fixed(r.buckets ? st(r).mean.mean / double(r.buckets) * 1e3 : 0, 4); }},
      {"busbw", 8, [](const R& r) { return fixed(r.busbw_GBps(), 3); }},
      {"cpu/w", 6, [=](const R& r) { return fixed(st(r).mean.mean > 0 ? st(r).cpu_mean_s / st(r).mean.mean : 0, 2); }},
      {"#wrong", 6, [](const R& r) { return std::to_string(r.result.wrong); }},
  };
  return c;
}

void print_bucket_header(const Session& s, const RunOptions& ro, const Provenance& prov, const GradientLayout& layout,
                         const std::string& dtype, const Columns<BucketRow>& columns) {
  if (s.rank != 0) return;
  const std::size_t n = layout.total_numel();
  fmt::print("{}", simulation_banner());
  fmt::print("# bucket_sweep: layout {}{} ({} tensors, {} parameters, {} per iteration as {}), {} ranks\n", layout.name,
             ro.weak() ? fmt::format(" x {} ranks (weak scaling)", s.size) : "", layout.tensors.size(), n,
             format_size(n * size_of(parse_dtype(dtype))), dtype, s.size);
  fmt::print("# backend: {} ({})\n", *prov.find("backend"), *prov.find("backend_library"));
  fmt::print(
      "# DDP packing: reverse order, tensors never split, first bucket capped at 1 MiB, later ones at the cap\n");
  fmt::print("# iteration = allreduce of every bucket in turn (communication only; no compute to overlap)\n");
  fmt::print("# times per iteration; busbw = (bytes per iteration / t_mean) * 2(n-1)/n; sync: {}; off-cache: {}\n",
             ro.sync, ro.off_cache ? "yes (gradients evicted from the cache before each iteration)" : "no");
  fmt::print("{}", columns.header_line());
  std::fflush(stdout);
}

void add_bucket_rows(Table& t, std::int64_t id, const BucketCase& c, const GradientLayout& layout, Dtype dt,
                     const std::vector<double>& bucket_mean_s) {
  const std::vector<Bucket>& buckets = c.buckets();
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    t.ints("case", "", "summary row").push_back(id);
    t.ints("bucket", "", "bucket index in backward order").push_back(static_cast<std::int64_t>(b));
    t.ints("bytes", "B", "bucket size").push_back(static_cast<std::int64_t>(buckets[b].numel * size_of(dt)));
    t.ints("tensors", "", "tensors in the bucket").push_back(static_cast<std::int64_t>(buckets[b].tensors.size()));
    t.strings("first_tensor", "first tensor packed (last in forward order)")
        .push_back(layout.tensors[buckets[b].tensors.front()].name);
    t.reals("t_mean_us", "us", "mean over ranks and iterations").push_back(bucket_mean_s[b] * 1e6);
  }
}

Table layout_table(const GradientLayout& layout) {
  Table t;
  for (const TensorSpec& s : layout.tensors) {
    t.strings("name", "parameter tensor, forward order").push_back(s.name);
    t.ints("numel", "", "elements").push_back(static_cast<std::int64_t>(s.numel));
  }
  return t;
}

}  // namespace sp::coll
