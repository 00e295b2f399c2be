#include "sim/cpu/cpu_backend.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/common/group_runs.h"
#include "sim/common/local_expansion.h"
#include "sim/common/timestep.h"
#include "sim/stage_timer.h"

namespace bhviz::sim {

void CpuBackend::upload(const Particles& p) {
  m_particles = p;
  m_active.assign(p.size(), 1);
  m_tree = {};
  m_groups = {};
  m_treeShape = {};
  m_walkCurrent = false;
}

int CpuBackend::openKicks(const Clock& clock, const SimParams& p) {
  StageTimer timer(m_profile, Stage::Predict);
  return cpu::openKicks(m_particles, clock, p);
}

void CpuBackend::drift(float dt) {
  StageTimer timer(m_profile, Stage::Predict);
  cpu::drift(m_particles, dt);
  m_walkCurrent = false;
}

void CpuBackend::computeForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                               bool oldAccValid) {
  build(clock, p, targets, oldAccValid, nullptr, nullptr);
  walkLocal();
  m_walkCurrent = true;
}

void CpuBackend::build(const Clock& clock, const SimParams& p, ForceTargets targets,
                       bool oldAccValid, const KeyFrame* frame, const OrbCuts* domains) {
  m_domains = domains != nullptr ? *domains : OrbCuts{1, {}};
  m_walkCurrent = false;  // computeForces sets it after its walk; a rank's evaluation does not
  if (!prepare(clock, p, targets, oldAccValid)) return;
  m_treeShape = {};  // the sort reorders the particles: the old tree fits them no more
  const OrbCutsView view = viewOf(m_domains);
  m_tree = cpu::buildSortedTree(m_particles, p.curve, p.nLeaf, m_mac, &m_profile, frame,
                                domains != nullptr ? &view : nullptr, &m_keys);
  // A tree in a given frame is one rank's part of a distributed run's: not refitted alone.
  m_treeShape = {frame == nullptr, p.nLeaf, p.curve, m_particles.size()};
  buildGroups(clock, p, targets);
}

bool CpuBackend::refitForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                             bool oldAccValid) {
  return evaluateOnLastTree(clock, p, targets, oldAccValid, false);
}

bool CpuBackend::rebuildAroundTargets(const Clock& clock, const SimParams& p, ForceTargets targets,
                                      bool oldAccValid) {
  return evaluateOnLastTree(clock, p, targets, oldAccValid, true);
}

bool CpuBackend::evaluateOnLastTree(const Clock& clock, const SimParams& p, ForceTargets targets,
                                    bool oldAccValid, bool aroundTargets) {
  if (!m_treeShape.fits(p, m_particles.size())) {
    computeForces(clock, p, targets, oldAccValid);
    return false;
  }
  prepare(clock, p, targets, oldAccValid);
  if (aroundTargets) {
    {
      StageTimer timer(m_profile, Stage::Sort);
      markTargets(clock, targets);
      const std::vector<std::uint32_t> cells =
          cpu::coverTargets(m_tree, m_active, kAroundTargetsShare);
      cpu::rekeyCells(m_tree, cells, p.curve, m_particles, m_keys);
    }
    StageTimer timer(m_profile, Stage::Tree);
    const KeyFrame frame = m_tree.frame;
    m_tree = cpu::buildTree(m_keys, frame, p.nLeaf);
  }
  {
    StageTimer timer(m_profile, Stage::Moments);
    cpu::computeMoments(m_tree, m_particles.posMass, m_mac);
  }
  buildGroups(clock, p, targets);
  walkLocal();
  m_walkCurrent = true;
  return true;
}

bool CpuBackend::probeRefit(const Clock& clock, const SimParams& p, ForceTargets targets,
                            bool oldAccValid, std::uint32_t sampleEvery) {
  m_probe = {};
  // (The mutual near field counts its interactions otherwise: no sample to set against it.)
  if (!m_treeShape.fits(p, m_particles.size()) || sampleEvery == 0 || p.p2p == P2pMode::Mutual) {
    return false;
  }
  const auto start = std::chrono::steady_clock::now();
  if (!prepare(clock, p, targets, oldAccValid)) return false;
  cpu::computeMoments(m_tree, m_particles.posMass, m_mac);
  makeGroups(clock, p, targets);
  m_probeForces.resize(m_particles.size());
  cpu::WalkSettings s = m_walk;
  s.potential = false;
  const InteractionCounts c = cpu::walkSources(
      m_tree, m_particles.posMass, m_groups.every(sampleEvery), m_particles.posMass, m_active, s,
      cpu::WalkMode::Write, m_probeForces, nullptr);
  if (c.targets == 0) return false;
  m_probe = {
      double(c.cell + c.particle) / double(c.targets),
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count()};
  return true;
}

bool CpuBackend::recomputePotentials() {
  if (!m_walkCurrent || m_particles.size() == 0) return false;
  cpu::WalkSettings s = m_walk;
  s.potential = true;
  cpu::walkSources(m_tree, m_particles.posMass, m_groups, m_particles.posMass, m_active, s,
                   cpu::WalkMode::Potential, m_particles.accPot, nullptr);
  return true;
}

bool CpuBackend::prepare(const Clock& clock, const SimParams& p, ForceTargets targets,
                         bool oldAccValid) {
  m_mac = macSetup(p, oldAccValid);
  m_walk = cpu::WalkSettings{m_mac, p.quadrupole, p.softening, p.p2p};
  m_walk.potential = computesPotential(clock, targets);
  m_walk.expansion = expansionRule(p, m_mac, oldAccValid);
  m_leafSize = p.nLeaf;
  m_work.assign(m_particles.size(), 0);
  if (m_particles.size() > 0) return true;
  // A rank of a distributed run may hold none.
  m_tree = {};
  m_groups = {};
  m_active.clear();
  m_treeShape = {};
  return false;
}

void CpuBackend::markTargets(const Clock& clock, ForceTargets targets) {
  const Particles& s = m_particles;
  m_active.resize(s.size());
#pragma omp parallel for
  for (std::size_t i = 0; i < s.size(); ++i) {
    m_active[i] = targets == ForceTargets::All || isActive(s.bin[i], clock.tick, clock.depth);
  }
}

void CpuBackend::buildGroups(const Clock& clock, const SimParams& p, ForceTargets targets) {
  StageTimer timer(m_profile, Stage::Groups);
  makeGroups(clock, p, targets);
}

void CpuBackend::makeGroups(const Clock& clock, const SimParams& p, ForceTargets targets) {
  const Particles& s = m_particles;
  markTargets(clock, targets);
  m_groups = cpu::buildGroups(m_tree, s.posMass, s.accPot, m_active, p.nGroup);
  // A block substep's few groups are walked in runs (as the CUDA backend's: group_runs.h).
  if (cutsGroupsIntoRuns(m_mac.code, targets == ForceTargets::All || clock.synchronized())) {
    cpu::cutIntoRuns(m_groups, s.posMass, m_active);
  }
}

TargetRegion CpuBackend::targetRegion() const {
  TargetRegion r;
  for (std::size_t g = 0; g < m_groups.size(); ++g) {
    grow(r.box, m_groups.box[g]);
    r.accMin = std::min(r.accMin, m_groups.accMin[g]);
  }
  return r;
}

LetTree CpuBackend::essentialTree(const TargetRegion& region) const {
  return sim::essentialTree(m_tree, m_particles.posMass, m_mac, region);
}

void CpuBackend::walk(const Tree& tree, const std::vector<Vec4>& sources, cpu::WalkMode mode) {
  StageTimer timer(m_profile, Stage::Walk);
  // The mutual near field needs the sources to be the targets: the local tree's.
  const bool mutual =
      m_walk.p2p == P2pMode::Mutual && &tree == &m_tree && mode == cpu::WalkMode::Write;
  const InteractionCounts counts =
      mutual ? cpu::walkGroupsMutual(tree, m_groups, m_particles.posMass, m_active, m_walk,
                                     m_particles.accPot, &m_work)
             : cpu::walkSources(tree, sources, m_groups, m_particles.posMass, m_active, m_walk,
                                mode, m_particles.accPot, &m_work);
  m_profile.interactions.cell += counts.cell;
  m_profile.interactions.particle += counts.particle;
  m_profile.interactions.expanded += counts.expanded;
  // A target of several trees is one target.
  if (mode == cpu::WalkMode::Write) {
    m_profile.interactions.targets += counts.targets;
    m_profile.interactions.groups += m_groups.size();
  }
}

void CpuBackend::walkLocal() { walk(m_tree, m_particles.posMass, cpu::WalkMode::Write); }

void CpuBackend::walkImported(const LetTree& let) {
  walk(let.tree, let.posMass, cpu::WalkMode::Add);
}

void CpuBackend::walkLocalAndImported(const std::vector<LetTree>& lets) {
  // The mutual near field pairs the targets with their own tree's leaves: it keeps the trees
  // apart.
  if (lets.empty() || m_walk.p2p == P2pMode::Mutual || m_tree.cellCount() == 0) {
    ForceParts::walkLocalAndImported(lets);
    return;
  }
  MergedTree merged;
  {
    StageTimer timer(m_profile, Stage::Let);
    const OrbCutsView view = viewOf(m_domains);
    const OrbCutsView* domains = m_domains.levels() > 0 ? &view : nullptr;
    for (const LetTree& let : lets) {
      if (let.empty()) continue;
      merged =
          merged.tree.cellCount() == 0
              ? mergeEssentialTree(m_tree, m_particles.posMass, let, m_mac, domains)
              : mergeEssentialTree(merged.tree, merged.sources, let, m_mac, domains, merged.parts);
    }
  }
  if (merged.tree.cellCount() == 0) {
    walkLocal();
    return;
  }
  walk(merged.tree, merged.sources, cpu::WalkMode::Write);
}

void CpuBackend::closeKicks(const Clock& clock) {
  StageTimer timer(m_profile, Stage::Integrate);
  cpu::closeKicks(m_particles, clock);
}

std::unique_ptr<OrbParticles> CpuBackend::orbParticles(bool unitWeights) const {
  const Particles& s = m_particles;
  std::vector<std::uint64_t> weight;  // none: unit weights
  if (!unitWeights && m_work.size() == s.size()) {
    weight.resize(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) weight[i] = orbWeight(m_work[i], s.bin[i]);
  }
  return std::make_unique<HostOrbParticles>(s.posMass, std::move(weight));
}

void CpuBackend::strays(const OrbCuts& cuts, int rank, std::vector<std::uint32_t>& index,
                        std::vector<int>& domain) const {
  index.clear();
  domain.clear();
  const std::vector<Vec4>& x = m_particles.posMass;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const int d = orbDomainOf(cuts.cut.data(), cuts.levels(), cuts.ranks, xyz(x[i]));
    if (d == rank) continue;
    index.push_back(static_cast<std::uint32_t>(i));
    domain.push_back(d);
  }
}

Particles CpuBackend::gather(const std::vector<std::uint32_t>& indices) const {
  Particles out;
  out.resize(indices.size());
  const Particles& s = m_particles;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    const std::uint32_t i = indices[k];
    if (i >= s.size()) throw std::out_of_range("gather: no particle " + std::to_string(i));
    copyParticle(s, i, out, k);
  }
  return out;
}

void CpuBackend::exchange(const std::vector<std::uint32_t>& leaving, const Particles& arriving) {
  Particles& s = m_particles;
  // The GPU's plan (every particle that stays keeps its slot below the new end), so that both
  // backends hold the same particles in the same order after an exchange.
  const ExchangePlan plan = planExchange(s.size(), leaving, arriving.size());
  for (std::size_t k = 0; k < plan.from.size(); ++k) copyParticle(s, plan.from[k], s, plan.to[k]);
  s.resize(plan.size);
  for (std::size_t j = 0; j < arriving.size(); ++j) copyParticle(arriving, j, s, plan.arrivalAt[j]);
  m_active.assign(s.size(), 1);
  m_tree = {};
  m_groups = {};
  m_treeShape = {};
  m_walkCurrent = false;
  m_work.clear();
}

std::vector<std::uint32_t> CpuBackend::nonFiniteIds(std::size_t max) const {
  // Positions, then velocities, then forces: one runaway particle soon makes every force
  // (and through the kicks every velocity) NaN, and it is the one worth naming.
  const Particles& s = m_particles;
  const std::vector<Vec4>* tiers[] = {&s.posMass, &s.vel, &s.accPot};
  std::vector<std::uint32_t> ids;
  for (const std::vector<Vec4>* tier : tiers) {
    for (std::size_t i = 0; i < s.size() && ids.size() < max; ++i) {
      if (!allFinite((*tier)[i])) ids.push_back(s.id[i]);
    }
    if (!ids.empty()) break;
  }
  return ids;
}

CpuBackend::GroupInteractions CpuBackend::interactionsOfGroup(std::size_t group) const {
  if (group >= m_groups.size()) {
    throw std::out_of_range("interactionsOfGroup: group " + std::to_string(group) + " of " +
                            std::to_string(m_groups.size()));
  }
  GroupInteractions g;
  g.group = group;
  g.list = cpu::buildInteractionList(m_tree, m_groups.box[group], m_groups.accMin[group], m_mac);
  std::uint64_t targets = 0;
  for (std::uint32_t i = m_groups.first[group]; i < m_groups.first[group] + m_groups.count[group];
       ++i) {
    targets += m_active[i] ? 1 : 0;
  }
  std::uint64_t leafParticles = 0;
  for (std::uint32_t leaf : g.list.leaves) leafParticles += m_tree.count[leaf];
  g.counts = {g.list.cells.size() * targets, leafParticles * targets, targets};
  // Which of the cells the walk expanded about the group (TargetBlock's rule).
  if (targets > 0) {
    const ExpansionCentre e = expansionCentre(
        m_groups.box[group], m_groups.expansionTargets(group, static_cast<unsigned>(targets)),
        m_walk.expansion, m_groups.accMin[group]);
    g.counts.expanded = cpu::countExpanded(m_tree, g.list.cells, e) * targets;
  }
  return g;
}

CpuBackend::GroupInteractions CpuBackend::interactionListOf(std::uint32_t particleId) const {
  const auto it = std::find(m_particles.id.begin(), m_particles.id.end(), particleId);
  const auto index = static_cast<std::uint32_t>(it - m_particles.id.begin());
  if (it != m_particles.id.end() && index < m_active.size() && m_active[index]) {
    const std::int64_t g = cpu::groupContaining(m_groups, index);
    if (g >= 0) return interactionsOfGroup(static_cast<std::size_t>(g));
  }
  throw std::out_of_range("interactionListOf: particle id " + std::to_string(particleId) +
                          " got no force in the last evaluation");
}

std::unique_ptr<Backend> makeCpuBackend() { return std::make_unique<CpuBackend>(); }

}  // namespace bhviz::sim
