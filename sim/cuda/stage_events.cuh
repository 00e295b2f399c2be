#pragma once
// A CUDA backend's stage timing: a pair of events per stage around its launches on the
// backend's stream, read into the step's profile where the step waits anyway (cuda_backend.cu).

#include <cuda_runtime.h>

#include <array>

#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/cuda_stages.h"
#include "sim/profile.h"

namespace bhviz::sim::cuda {

/// A pair of CUDA events per stage; stage times are read when the step waits anyway.
class StageEvents {
 public:
  StageEvents() {
    for (auto& e : m_start) BHVIZ_CUDA_CHECK(cudaEventCreate(&e));
    for (auto& e : m_stop) BHVIZ_CUDA_CHECK(cudaEventCreate(&e));
  }
  ~StageEvents() {
    for (auto& e : m_start) (void)cudaEventDestroy(e);
    for (auto& e : m_stop) (void)cudaEventDestroy(e);
  }
  StageEvents(const StageEvents&) = delete;
  StageEvents& operator=(const StageEvents&) = delete;

  void begin(Stage stage, Stream s) { BHVIZ_CUDA_CHECK(cudaEventRecord(m_start[index(stage)], s)); }
  void end(Stage stage, Stream s) {
    BHVIZ_CUDA_CHECK(cudaEventRecord(m_stop[index(stage)], s));
    m_pending[index(stage)] = true;
  }
  /// Adds the pending stages' times to the profile (waits for their stop events).
  void collect(StepProfile& profile) {
    for (int k = 0; k < kStages; ++k) {
      if (!m_pending[k]) continue;
      BHVIZ_CUDA_CHECK(cudaEventSynchronize(m_stop[k]));
      float ms = 0.0f;
      BHVIZ_CUDA_CHECK(cudaEventElapsedTime(&ms, m_start[k], m_stop[k]));
      profile.ms[k] += ms;
      m_pending[k] = false;
    }
  }

 private:
  static constexpr int kStages = static_cast<int>(Stage::Count);
  static int index(Stage s) { return static_cast<int>(s); }
  std::array<cudaEvent_t, kStages> m_start{}, m_stop{};
  std::array<bool, kStages> m_pending{};
};

/// Runs `launch` between a stage's two events.
template <typename Launch>
void timed(StageEvents& events, Stage stage, Stream s, Launch&& launch) {
  events.begin(stage, s);
  launch();
  events.end(stage, s);
}

}  // namespace bhviz::sim::cuda
