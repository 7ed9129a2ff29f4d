#include "core/measure/timer.hpp"

#include <cstdio>

#if defined(SCALEPROBE_SIMULATED)
#include <mpi.h>
#endif

namespace sp {

double wall_seconds() {
#if defined(SCALEPROBE_SIMULATED)
  return MPI_Wtime();  // SMPI's simulated clock: the platform's time, not this machine's
#else
  using clock = std::chrono::steady_clock;
  static const clock::time_point epoch = clock::now();
  return std::chrono::duration<double>(clock::now() - epoch).count();
#endif
}

double thread_runqueue_wait_seconds() {
#if defined(SCALEPROBE_SIMULATED)
  return -1;  // a simulated process has no run queue
#endif
  // /proc/thread-self/schedstat: "<on-cpu ns> <run-queue wait ns> <timeslices>".
  std::FILE* f = std::fopen("/proc/thread-self/schedstat", "r");
  if (!f) return -1;
  unsigned long long run = 0, wait = 0;
  int n = std::fscanf(f, "%llu %llu", &run, &wait);
  std::fclose(f);
  return n == 2 ? 1e-9 * double(wait) : -1;
}

}  // namespace sp
