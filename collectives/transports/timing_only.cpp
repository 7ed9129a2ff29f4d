#include "collectives/transports/timing_only.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "collectives/transports/forwarding_transport.hpp"
#include "core/run/error.hpp"
#include "core/run/program.hpp"
#include "core/run/sizes.hpp"

#ifdef SCALEPROBE_SIMULATED
#include <smpi/smpi.h>
#endif

namespace sp::coll {

std::uint64_t simulated_private_bytes() {
  if (!kSimulatedBuild) return 0;
  if (const char* text = std::getenv("SCALEPROBE_SIM_PRIVATE_BYTES"); text && *text) {
    try {
      return parse_size(text);
    } catch (const Error& e) {
      throw UsageError(fmt::format("SCALEPROBE_SIM_PRIVATE_BYTES={}: {}", text, e.what()));
    }
  }
  return std::min<std::uint64_t>(std::uint64_t(8) << 30, physical_memory_bytes() / 2);
}

bool runs_timing_only(std::uint64_t rank_bytes, int nranks, std::uint64_t private_bytes) {
  if (!kSimulatedBuild) return false;
  return rank_bytes > private_bytes / std::uint64_t(std::max(nranks, 1));
}

void print_timing_only_rule(const Session& s, std::uint64_t private_bytes) {
  if (!kSimulatedBuild || s.rank != 0) return;
  fmt::print(
      "# timing only: a case whose buffers over all {} simulated ranks pass {} runs on SMPI shared memory, "
      "its local reductions skipped and its result not verified (wrong = -1; SCALEPROBE_SIM_PRIVATE_BYTES)\n",
      s.size, format_size(private_bytes));
}

#ifdef SCALEPROBE_SIMULATED
namespace {

TransportBuffer shared_buffer(std::size_t bytes) {
  void* p = SMPI_SHARED_MALLOC(std::max<std::size_t>(bytes, 1));
  if (p == nullptr) fail("SMPI_SHARED_MALLOC of {} failed", format_size(bytes));
  return TransportBuffer(p, bytes, [](void* q) noexcept { SMPI_SHARED_FREE(q); });
}

class TimingOnly final : public ForwardingTransport {
 public:
  explicit TimingOnly(Transport& t) : ForwardingTransport(t) {}
  bool holds_data() const override { return false; }
  TransportBuffer allocate(std::size_t bytes) const override { return shared_buffer(bytes); }
  // Local work on data nobody reads: skipped (it would take no simulated time anyway).
  void copy(void*, const void*, std::size_t) const override {}
  void from_host(void*, const void*, std::size_t) const override {}
  void to_host(void*, const void*, std::size_t) const override {}
  void reduce(void*, const void*, std::size_t, Dtype, Op) const override {}
  void scale(void*, std::size_t, Dtype, double) const override {}
  std::size_t count_mismatches(const void*, const void*, std::size_t, Dtype) const override {
    fail("a timing-only case holds no data to verify");
  }
  void library_allreduce(const void* s, void* r, std::size_t n, Dtype d, Op o) override {
    inner().library_allreduce(s, s == r ? out_of_place(n, d) : r, n, d, o);
  }
  Request post_library_allreduce(const void* s, void* r, std::size_t n, Dtype d, Op o) override {
    return inner().post_library_allreduce(s, s == r ? out_of_place(n, d) : r, n, d, o);
  }

 private:
  void* out_of_place(std::size_t n, Dtype d) {
    if (scratch_.size() < n * size_of(d)) scratch_ = shared_buffer(n * size_of(d));
    return scratch_.data();
  }
  TransportBuffer scratch_;
};

}  // namespace

std::unique_ptr<Transport> make_timing_only(Transport& t) { return std::make_unique<TimingOnly>(t); }
#else
std::unique_ptr<Transport> make_timing_only(Transport&) {
  fail("timing-only cases exist in the simulated build only (cmake --preset smpi)");
}
#endif

}  // namespace sp::coll
