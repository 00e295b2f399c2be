#pragma once
// The CPU reference backend: clear C++17 + OpenMP, the oracle for the GPU and the path for
// machines without an NVIDIA GPU.

#include <vector>

#include "sim/backend.h"
#include "sim/cpu/cpu_stages.h"

namespace bhviz::sim {

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  void upload(const Particles& p) override;
  void download(Particles& p) const override { p = m_particles; }
  std::size_t size() const override { return m_particles.size(); }

  int openKicks(const Clock& clock, const SimParams& p) override;
  void drift(float dt) override;
  void computeForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                     bool oldAccValid) override;
  void closeKicks(const Clock& clock) override;
  std::vector<std::uint32_t> nonFiniteIds(std::size_t max) const override;

  const StepProfile& profile() const override { return m_profile; }
  void resetProfile() override { m_profile = {}; }

  /// The tree, groups and particles (key order) of the last force evaluation, for tests and
  /// overlays.
  const Tree& tree() const { return m_tree; }
  const Groups& groups() const { return m_groups; }
  const Particles& particles() const { return m_particles; }

 private:
  Particles m_particles;
  std::vector<std::uint8_t> m_active;
  Tree m_tree;
  Groups m_groups;
  StepProfile m_profile;
};

}  // namespace bhviz::sim
