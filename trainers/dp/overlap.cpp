#include "trainers/dp/overlap.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace sp::dp {

std::string_view name(OverlapMode m) {
  return m == OverlapMode::none ? "none" : m == OverlapMode::progress ? "progress" : "thread";
}

namespace {

OverlapChoice refused(std::string error) {
  OverlapChoice c;
  c.error = std::move(error);
  return c;
}

// The thread mode bound to comm_cpu, compute on the rest of the binding.
OverlapChoice bound_thread(const RankBinding& b, int comm_cpu, std::string reason) {
  OverlapChoice c;
  c.mode = OverlapMode::thread;
  c.comm_cpu = comm_cpu;
  for (int cpu : b.cpus)
    if (cpu != comm_cpu) c.compute_cpus.push_back(cpu);
  c.reason = std::move(reason);
  return c;
}

}  // namespace

OverlapChoice choose_overlap(const OverlapRequest& r, const RankBinding& b) {
  const std::string binding = fmt::format("this rank's CPUs {}, of them in no other local rank's binding: {}",
                                          cpu_list(b.cpus), cpu_list(b.exclusive));
  if (!r.synchronous) {
    if (r.mode == "progress" || r.mode == "thread" || r.comm_core >= 0)
      return refused(fmt::format("--overlap {}{}: there is no gradient allreduce to overlap (local SGD or --no-comm)",
                                 r.mode, r.comm_core >= 0 ? " / --comm-core" : ""));
    OverlapChoice c;
    c.mode = OverlapMode::none;
    c.reason = "no gradient allreduce (local SGD or --no-comm)";
    return c;
  }
  if (r.compute_thread_communicates) {
    if (r.mode == "thread" || r.comm_core >= 0)
      return refused(
          fmt::format("--overlap {}{}: a pipeline stage sends and receives on its compute thread while "
                      "backward runs, and MPI takes one caller at a time: use --overlap progress or none",
                      r.mode, r.comm_core >= 0 ? " / --comm-core" : ""));
    if (r.mode == "auto") {
      OverlapChoice c;
      c.mode = r.can_progress ? OverlapMode::progress : OverlapMode::none;
      c.reason = "auto: a pipeline stage's compute thread communicates, so no communication thread";
      return c;
    }
  }
  if (r.comm_core >= 0) {
    if (r.mode != "auto" && r.mode != "thread")
      return refused(
          fmt::format("--comm-core is the communication thread's core; --overlap {} has no such thread", r.mode));
    if (!std::count(b.cpus.begin(), b.cpus.end(), r.comm_core))
      return refused(
          fmt::format("--comm-core {} is outside this rank's binding (CPUs {})", r.comm_core, cpu_list(b.cpus)));
    if (!std::count(b.exclusive.begin(), b.exclusive.end(), r.comm_core))
      return refused(fmt::format("--comm-core {} is also in another local rank's binding ({})", r.comm_core, binding));
    if (b.cpus.size() < std::size_t(r.compute_threads) + 1)
      return refused(fmt::format("--comm-core {} leaves no CPU for this rank's {} compute thread(s) (CPUs {})",
                                 r.comm_core, r.compute_threads, cpu_list(b.cpus)));
    return bound_thread(b, r.comm_core, fmt::format("--comm-core {}", r.comm_core));
  }
  // A spare core: one more exclusive CPU than the compute threads need; the last one.
  const bool spare = b.exclusive.size() >= std::size_t(r.compute_threads) + 1;
  const std::string spare_reason = fmt::format("spare core {} ({})", spare ? b.exclusive.back() : -1, binding);
  if (r.mode == "none") {
    OverlapChoice c;
    c.mode = OverlapMode::none;
    c.reason = "--overlap none";
    return c;
  }
  if (r.mode == "progress") {
    if (!r.can_progress)
      return refused(
          fmt::format("--overlap progress: the {} transport cannot advance an allreduce without blocking "
                      "(use --overlap thread)",
                      r.transport));
    OverlapChoice c;
    c.reason = "--overlap progress";
    return c;
  }
  if (r.mode == "auto" && r.ranks == 1 && r.can_progress) {
    OverlapChoice c;
    c.reason = "auto: one rank, no communication to overlap";
    return c;
  }
  if (r.mode == "thread" || r.mode == "auto") {
    if (spare) return bound_thread(b, b.exclusive.back(), (r.mode == "auto" ? "auto: " : "") + spare_reason);
    if (!r.busy_polls) {
      OverlapChoice c;
      c.mode = OverlapMode::thread;
      c.reason = fmt::format("{}the {} transport's waits sleep: the thread needs no core of its own ({})",
                             r.mode == "auto" ? "auto: " : "", r.transport, binding);
      return c;
    }
    if (r.mode == "thread")
      return refused(
          fmt::format("--overlap thread on {} needs a spare core for the communication thread, and this "
                      "rank has none ({}; {} compute thread(s)): bind each rank to one more CPU "
                      "(--cpus-per-task) or give --comm-core",
                      r.transport, binding, r.compute_threads));
    OverlapChoice c;  // auto, no spare core, a transport that spins: progress where it can
    c.mode = r.can_progress ? OverlapMode::progress : OverlapMode::thread;
    c.reason = fmt::format("auto: no spare core ({}){}", binding,
                           r.can_progress ? "" : fmt::format("; the {} transport cannot progress", r.transport));
    return c;
  }
  return refused(fmt::format("--overlap '{}': choose auto, progress, thread or none", r.mode));
}

}  // namespace sp::dp
