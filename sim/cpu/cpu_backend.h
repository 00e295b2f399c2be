#pragma once
// The CPU reference backend: clear C++17 + OpenMP, the oracle for the GPU and the path for
// machines without an NVIDIA GPU.

#include <utility>
#include <vector>

#include "sim/backend.h"
#include "sim/cpu/cpu_stages.h"

namespace bhviz::sim {

class CpuBackend final : public Backend, private ForceParts {
 public:
  BackendTraits traits() const override {
    BackendTraits t{"cpu", BackendLimits{}, false, 0};
    t.rebuildsAroundTargets = true;
    return t;
  }
  void upload(const Particles& p) override;
  void download(Particles& p) const override { p = m_particles; }
  std::size_t size() const override { return m_particles.size(); }

  int openKicks(const Clock& clock, const SimParams& p) override;
  void drift(float dt) override;
  void computeForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                     bool oldAccValid) override;
  bool refitForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                   bool oldAccValid) override;
  bool rebuildAroundTargets(const Clock& clock, const SimParams& p, ForceTargets targets,
                            bool oldAccValid) override;
  bool probeRefit(const Clock& clock, const SimParams& p, ForceTargets targets, bool oldAccValid,
                  std::uint32_t sampleEvery) override;
  RefitProbe refitProbe() override { return std::exchange(m_probe, RefitProbe{}); }
  void closeKicks(const Clock& clock) override;
  /// The plain walk again (the mutual near field's potentials differ from it by fp32 rounding).
  bool recomputePotentials() override;
  std::vector<std::uint32_t> nonFiniteIds(std::size_t max) const override;
  Diagnostics diagnostics(const Clock& clock) const override {
    return computeDiagnostics(m_particles, clock);  // in place: no copy of the state
  }

  const StepProfile& profile() const override { return m_profile; }
  void resetProfile() override { m_profile = {}; }

  // Exports (sim/cpu/draw.cpp).
  TreeCensus treeCensus() const override;
  TreeStatistics treeStatistics() const override;  // sim/cpu/tree_statistics.cpp
  std::size_t boxCount(const BoxQuery& q) const override;
  std::vector<DrawBox> boxes(const BoxQuery& q) const override;
  std::unique_ptr<Backend> makeScratch(std::size_t n) const override;
  const Particles* hostParticles() const override { return &m_particles; }
  ForceParts* forceParts() override { return this; }

  /// The tree, groups and particles (key order) of the last force evaluation, for tests and
  /// overlays.
  const Tree& tree() const { return m_tree; }
  const Groups& groups() const { return m_groups; }
  const Particles& particles() const { return m_particles; }

  /// One group's interaction list of the last force evaluation, exactly as the walk built and
  /// used it, with the counts the walk added for it (cells and leaf particles times the group's
  /// active particles, and those targets).
  struct GroupInteractions {
    std::size_t group = 0;  ///< index into groups()
    cpu::InteractionList list;
    InteractionCounts counts;
  };
  /// For groups()[group]; throws std::out_of_range when there is no such group.
  GroupInteractions interactionsOfGroup(std::size_t group) const;
  /// For the group of the particle with this id; throws std::out_of_range when the last
  /// evaluation gave that particle no force (not active, or no such id).
  GroupInteractions interactionListOf(std::uint32_t particleId) const;

 private:
  // ForceParts: computeForces is build() then walkLocal().
  void build(const Clock& clock, const SimParams& p, ForceTargets targets, bool oldAccValid,
             const KeyFrame* frame, const OrbCuts* domains) override;
  Box bounds() const override { return cpu::boundingBox(m_particles.posMass); }
  TargetRegion targetRegion() const override;
  LetTree essentialTree(const TargetRegion& region) const override;
  void walkLocal() override;
  void walkImported(const LetTree& let) override;
  void walkLocalAndImported(const std::vector<LetTree>& lets) override;
  std::vector<std::uint32_t> work() const override { return m_work; }
  std::unique_ptr<OrbParticles> orbParticles(bool unitWeights) const override;
  void strays(const OrbCuts& cuts, int rank, std::vector<std::uint32_t>& index,
              std::vector<int>& domain) const override;
  Particles gather(const std::vector<std::uint32_t>& indices) const override;
  void exchange(const std::vector<std::uint32_t>& leaving, const Particles& arriving) override;
  void walk(const Tree& tree, const std::vector<Vec4>& sources, cpu::WalkMode mode);
  /// build()'s settings of the evaluation; false when there are no particles.
  bool prepare(const Clock& clock, const SimParams& p, ForceTargets targets, bool oldAccValid);
  void buildGroups(const Clock& clock, const SimParams& p, ForceTargets targets);
  /// buildGroups untimed (probeRefit's).
  void makeGroups(const Clock& clock, const SimParams& p, ForceTargets targets);
  /// refitForces, and with `aroundTargets` rebuildAroundTargets: the last tree's particles (in
  /// its order, or sorted again within the cells around the targets), moments, groups and walk.
  bool evaluateOnLastTree(const Clock& clock, const SimParams& p, ForceTargets targets,
                          bool oldAccValid, bool aroundTargets);
  /// m_active: which particles get forces at this evaluation.
  void markTargets(const Clock& clock, ForceTargets targets);

  Particles m_particles;
  std::vector<std::uint8_t> m_active;
  Tree m_tree;
  std::vector<std::uint64_t> m_keys;  ///< m_tree's sorted keys (a rebuild around the targets')
  Groups m_groups;
  StepProfile m_profile;
  MacSetup m_mac;  ///< the MAC of the last evaluation (after the acceleration MAC's fallback)
  cpu::WalkSettings m_walk;           ///< the walk of the last build
  std::vector<std::uint32_t> m_work;  ///< interactions per particle since the last build
  RefitProbe m_probe;                 ///< the last probeRefit's, until refitProbe reads it
  std::vector<Vec4> m_probeForces;    ///< probeRefit's scratch
  int m_leafSize = 0;                 ///< N_leaf of the last build
  TreeShape m_treeShape;              ///< what m_tree was rebuilt with (none after upload)
  /// The last evaluation was one process's, at the particles' current positions: its tree,
  /// groups and settings can walk again (recomputePotentials).
  bool m_walkCurrent = false;
  /// The domains of the last build (ForceParts::build), whose parts of a cube a merged cell
  /// counts; no cuts: none given.
  OrbCuts m_domains{1, {}};
};

}  // namespace bhviz::sim
