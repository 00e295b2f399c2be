#pragma once
// Where a hung test_dist waits: with BHVIZ_TEST_STACKS_AFTER=s, every s seconds each rank's main
// thread writes its call stack (the ranks in turn) to stderr, one line a frame, as "rank R:
// binary(+offset)". The offsets are those of the binary as built (stripping keeps them): addr2line
// -Cfe build/tests/test_dist 0xOFFSET names the function and line. A test only: it reads nothing of
// the run, and without the variable it does nothing.

#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace bhviz::test {

namespace stack_watch_detail {

inline char g_header[32];
inline std::size_t g_headerLength = 0;

inline void writeStack(int) {
  // Async-signal-safe: backtrace was called once before (its library is loaded), and the
  // symbols are written straight to the descriptor.
  void* frames[64];
  const int n = backtrace(frames, 64);
  (void)!write(STDERR_FILENO, g_header, g_headerLength);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
}

}  // namespace stack_watch_detail

/// Starts the watch on the calling (main) thread when BHVIZ_TEST_STACKS_AFTER is set.
inline void watchStacks(int rank) {
  const char* after = std::getenv("BHVIZ_TEST_STACKS_AFTER");
  if (after == nullptr) return;
  const int seconds = std::atoi(after);
  if (seconds <= 0) return;
  namespace d = stack_watch_detail;
  d::g_headerLength = static_cast<std::size_t>(
      std::snprintf(d::g_header, sizeof d::g_header, "--- rank %d's stack:\n", rank));
  void* warm[1];
  (void)backtrace(warm, 1);
  struct sigaction action {};
  action.sa_handler = d::writeStack;
  action.sa_flags = SA_RESTART;
  sigaction(SIGUSR2, &action, nullptr);
  const pthread_t main = pthread_self();
  // The ranks take turns, 300 ms apart, so that their stacks do not interleave.
  std::thread([main, seconds, rank] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300 * rank));
    for (;;) {
      std::this_thread::sleep_for(std::chrono::seconds(seconds));
      pthread_kill(main, SIGUSR2);
    }
  }).detach();
}

}  // namespace bhviz::test
