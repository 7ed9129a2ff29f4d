#include "trainers/dp/stop_signals.hpp"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <thread>

namespace sp::dp {
namespace {

std::atomic<int> g_stop_signal{0};

void record(int sig) {
  int none = 0;
  g_stop_signal.compare_exchange_strong(none, sig);  // the first signal is the one reported
}

extern "C" void on_stop_signal(int sig) { record(sig); }

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGTERM);
  return set;
}

// In a forked child (MPICH's singleton launcher, the trace reader's isolation process), which may
// exec a program that expects these signals to act.
extern "C" void unblock_in_child() {
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

}  // namespace

void listen_for_stop_signals() {
  static std::atomic<bool> listening{false};
  if (listening.exchange(true)) return;
  struct sigaction action = {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  pthread_atfork(nullptr, nullptr, unblock_in_child);
  // Detached: it waits for the process's whole life and ends with it.
  std::thread([set] {
    for (;;) {
      int sig = 0;
      if (sigwait(&set, &sig) == 0) record(sig);
    }
  }).detach();
}

int stop_signal_received() { return g_stop_signal.load(); }

}  // namespace sp::dp
