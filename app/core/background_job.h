#pragma once
// Work that must not stall the frame loop (the accuracy meter, the window's sweep) runs on a
// thread of its own, one job at a time, on a scratch backend that only that thread touches.
// No GL and no UI here.

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <utility>

namespace bhviz::app {

/// Runs `f` on a new thread. `threads` > 0 sets that thread's OpenMP team size (the CPU backend
/// and the CPU direct sum use OpenMP; a new thread starts with the process default).
template <typename F>
auto runInBackground(int threads, F f) -> std::future<decltype(f())> {
  return std::async(std::launch::async, [threads, f = std::move(f)]() mutable {
    if (threads > 0) omp_set_num_threads(threads);
    return f();
  });
}

/// Half the cores (at least one): the meter's share while the simulation runs beside it.
inline int halfTheCores() { return std::max(1, omp_get_num_procs() / 2); }

/// True when `job` holds a result (or an exception) that get() returns without waiting.
template <typename T>
bool jobReady(const std::future<T>& job) {
  return job.valid() && job.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

}  // namespace bhviz::app
