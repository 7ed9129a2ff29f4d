#include "kernels/profile.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>

namespace sp::kernels::profile {
namespace {

std::atomic<bool> on{false};

struct Slot {
  const char* name;  // the kernel's string literal: compared by address first
  Row row;
};
// A few dozen kernels: a linear search beats a map at this size.
std::vector<Slot>& slots() {
  static std::vector<Slot> s;
  return s;
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

Row& row_of(const char* name) {
  auto& s = slots();
  for (Slot& x : s)
    if (x.name == name || std::strcmp(x.name, name) == 0) return x.row;
  s.push_back({name, Row{name}});
  return s.back().row;
}

}  // namespace

void set_enabled(bool enable) { on.store(enable, std::memory_order_relaxed); }
bool enabled() { return on.load(std::memory_order_relaxed); }

void reset() {
  for (Slot& x : slots()) x.row = Row{x.row.name};
}

std::vector<Row> rows() {
  std::vector<Row> out;
  for (const Slot& x : slots())
    if (x.row.calls > 0) out.push_back(x.row);
  std::sort(out.begin(), out.end(), [](const Row& a, const Row& b) { return a.name < b.name; });
  return out;
}

Scope::Scope(const char* name, double flops, double bytes) noexcept : name_(name), flops_(flops), bytes_(bytes) {
  if (enabled()) start_ = now();
}

Scope::~Scope() {
  if (start_ < 0) return;
  Row& r = row_of(name_);
  r.calls += 1;
  r.seconds += now() - start_;
  r.flops += flops_;
  r.bytes += bytes_;
}

}  // namespace sp::kernels::profile
