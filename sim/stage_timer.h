#pragma once
// The wall time of a scope, added to one stage of a profile: the CPU backend's stages and the
// distributed backend's (sim/dist/). The CUDA backend times its stages with events instead.

#include <chrono>

#include "sim/profile.h"

namespace bhviz::sim {

/// Adds the wall-clock time of its scope to one stage of a profile.
class StageTimer {
 public:
  StageTimer(StepProfile& profile, Stage stage)
      : m_profile(profile), m_stage(stage), m_start(std::chrono::steady_clock::now()) {}
  ~StageTimer() {
    const auto end = std::chrono::steady_clock::now();
    m_profile[m_stage] += std::chrono::duration<double, std::milli>(end - m_start).count();
  }
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

 private:
  StepProfile& m_profile;
  Stage m_stage;
  std::chrono::steady_clock::time_point m_start;
};

}  // namespace bhviz::sim
