// Where a training step's compute time goes, kernel by kernel (issue 28's profile): each kernel
// opens a Scope naming itself and the work one call does — floating-point operations and the
// bytes it must at least read and write — and, while profiling is on (the trainers'
// --profile-kernels), the scope adds its wall time to the kernel's row. Off, a scope costs one
// relaxed load and a branch. Rows are kept for the calling thread of the kernels (the trainer's
// compute thread: kernels parallelise inside themselves); a kernel called inside another one
// (conv2d's GEMMs are not kernels of this list) would be counted in both.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sp::kernels::profile {

struct Row {
  std::string name;
  std::int64_t calls = 0;
  double seconds = 0;  // wall time inside the kernel
  double flops = 0;    // floating-point operations, as the kernel counts them
  double bytes = 0;    // bytes it must move at least (each input read and output written once)
};

void set_enabled(bool on);
bool enabled();
void reset();             // every row to zero
std::vector<Row> rows();  // the kernels called since the last reset, by name

class Scope {
 public:
  Scope(const char* name, double flops, double bytes) noexcept;
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  const char* name_;
  double flops_, bytes_, start_ = -1;
};

}  // namespace sp::kernels::profile
