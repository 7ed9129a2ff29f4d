// Timing-only cases of the simulated build (SimGrid SMPI). All simulated ranks are one process of
// this machine, so a case's private buffers cost its per-rank bytes times the rank count: 1024 ranks
// of ResNet-50's gradients would be 400 GB. A case whose buffers over all ranks pass the private
// limit runs on SMPI's shared memory instead (SMPI_SHARED_MALLOC: every rank maps the same
// physical blocks), with its local reductions and copies skipped — they take no simulated time
// (scripts/simulate sets smpi/simulate-computation:no), so the simulated times are those the
// private run would give. Its result is not verified (wrong = -1 in its row): the stated exception
// to "every collective checks its result"; the same schedules are verified at the private sizes.
#pragma once
#include <cstdint>
#include <memory>

#include "collectives/transports/transport.hpp"
#include "core/run/program.hpp"

namespace sp::coll {

// The most bytes all simulated ranks' buffers of one case may take privately: half this machine's
// memory, at most 8 GiB, or SCALEPROBE_SIM_PRIVATE_BYTES (a size such as 2G) when set. 0 outside
// the simulated build. Read from the environment on every call: a run reads it once, at its
// setup (BenchmarkRun), and passes it down.
std::uint64_t simulated_private_bytes();

// Whether a case whose buffers take rank_bytes on each of nranks ranks runs timing only, under the
// private limit private_bytes (simulated_private_bytes()). Always false outside the simulated build.
bool runs_timing_only(std::uint64_t rank_bytes, int nranks, std::uint64_t private_bytes);

// t, with buffers of SMPI shared memory, local reductions, copies and scaling skipped, and the
// library's in-place allreduce run out of place into a shared buffer (SMPI's MPI_IN_PLACE gives
// every rank a private copy of the message). holds_data() is false: nothing can be verified.
// sp::Error outside the simulated build.
std::unique_ptr<Transport> make_timing_only(Transport& t);

// Simulated build, rank 0: the table line saying which cases run timing only under the private
// limit private_bytes. Nothing otherwise.
void print_timing_only_rule(const Session& s, std::uint64_t private_bytes);

}  // namespace sp::coll
