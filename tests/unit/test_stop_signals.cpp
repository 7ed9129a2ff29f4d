// trainers/dp/stop_signals: SIGUSR1 and SIGTERM reach one listening thread only. Threads started
// after listen_for_stop_signals have them blocked (no computation or MPI call is interrupted), a
// signal sent to the process is recorded (the first one kept), and a forked child gets them
// unblocked again (a launcher it execs must be stoppable).
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "trainers/dp/stop_signals.hpp"

namespace {

bool blocked_here(int sig) {
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return sigismember(&mask, sig) == 1;
}

int wait_for_stop_signal() {
  for (int i = 0; i < 500 && sp::dp::stop_signal_received() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return sp::dp::stop_signal_received();
}

}  // namespace

TEST(StopSignals, ThreadsStartedAfterListeningHaveThemBlocked) {
  sp::dp::listen_for_stop_signals();
  bool usr1 = false, term = false;
  std::thread([&] {
    usr1 = blocked_here(SIGUSR1);
    term = blocked_here(SIGTERM);
  }).join();
  EXPECT_TRUE(usr1);
  EXPECT_TRUE(term);
  EXPECT_TRUE(blocked_here(SIGUSR1));
  EXPECT_FALSE(blocked_here(SIGINT));
}

TEST(StopSignals, ASignalToTheProcessIsRecordedAndTheFirstKept) {
  sp::dp::listen_for_stop_signals();
  EXPECT_EQ(sp::dp::stop_signal_received(), 0);
  ASSERT_EQ(kill(getpid(), SIGTERM), 0);
  EXPECT_EQ(wait_for_stop_signal(), SIGTERM);
  ASSERT_EQ(kill(getpid(), SIGUSR1), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(sp::dp::stop_signal_received(), SIGTERM);
}

TEST(StopSignals, AForkedChildHasThemUnblocked) {
  sp::dp::listen_for_stop_signals();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(blocked_here(SIGUSR1) || blocked_here(SIGTERM) ? 1 : 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}
