// Which instruction-set variant of the kernels that have several (kernels/conv_direct.hpp) this
// process uses: recorded in every trainer trace's provenance (kernel_isa).
#pragma once

#include <string>
#include <vector>

namespace sp::kernels {

// The variants this binary has, widest first ("x86-64-v4" when built, then "baseline": the
// build's SCALEPROBE_ISA), and the one in use: SCALEPROBE_KERNEL_ISA if set, else the widest this
// CPU runs (chosen on first use; throws std::invalid_argument naming the problem if
// SCALEPROBE_KERNEL_ISA names a variant that is absent or that this CPU cannot run).
std::vector<std::string> kernel_isa_variants();
std::string kernel_isa();

}  // namespace sp::kernels
