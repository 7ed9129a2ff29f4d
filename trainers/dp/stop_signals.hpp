// SIGUSR1 and SIGTERM (SLURM's time-limit warning and scancel) as a request to stop a training
// run after the current step. The signals are received by one thread of their own, waiting in
// sigwait: every other thread, the MPI library's included, has them blocked, so no computation,
// no MPI call and no allocation is ever interrupted by them. (A handler interrupting whatever ran
// corrupted the heap in about one run in fifty under MPICH 4.0/UCX 1.13 with load; never seen
// since the signals were taken off the working threads.)
#pragma once

namespace sp::dp {

// Call once, in main, before MPI_Init and before any thread starts (the threads started later
// inherit the blocked signals). A signal that still reaches a thread started earlier (a library's
// pool) is recorded by a handler that only stores its number. Child processes (fork) start with
// the signals unblocked again.
void listen_for_stop_signals();

// The first stop signal received, 0 if none.
int stop_signal_received();

}  // namespace sp::dp
