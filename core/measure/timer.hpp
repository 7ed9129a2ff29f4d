// Per-rank timers. Durations only: clocks of different ranks are never compared, so a sample's
// start time is an offset from this rank's own epoch and is meaningful within one rank only.
// Every phase records wall time and the calling thread's CPU time: on an oversubscribed machine
// cpu < wall shows time the thread was runnable-but-waiting or blocked.
#pragma once
#include <time.h>

#include <chrono>

namespace sp {

// Seconds on a monotonic clock since the process's timing epoch (first use).
double wall_seconds();
// CPU seconds consumed by the calling thread (CLOCK_THREAD_CPUTIME_ID); 0 in the simulated build,
// whose processes have simulated time only.
inline double thread_cpu_seconds() {
#if defined(SCALEPROBE_SIMULATED)
  return 0;
#else
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
#endif
}
// Seconds the calling thread has spent runnable but waiting for a CPU (schedstat run-queue
// wait), or a negative value where the kernel does not expose it.
double thread_runqueue_wait_seconds();

struct PhaseSample {
  double start_s = 0;  // wall_seconds() at the start (rank-local)
  double wall_s = 0;
  double cpu_s = 0;
};

// Brackets one phase. The CPU clock is read outside the wall interval so the (syscall) cost of
// reading it never inflates the wall time; it slightly inflates cpu instead.
class PhaseTimer {
 public:
  void start() {
    cpu0_ = thread_cpu_seconds();
    wall0_ = wall_seconds();
  }
  PhaseSample stop() {
    double w = wall_seconds();
    double c = thread_cpu_seconds();
    return {wall0_, w - wall0_, c - cpu0_};
  }

 private:
  double wall0_ = 0, cpu0_ = 0;
};

}  // namespace sp
