#include "sim/cpu/cpu_backend.h"

#include <chrono>
#include <cmath>

#include "sim/common/timestep.h"

namespace bhviz::sim {

namespace {

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

float accMagnitude(const Vec4& a) { return std::sqrt(a.x * a.x + a.y * a.y + a.z * a.z); }

bool finite(const Vec4& v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z) && std::isfinite(v.w);
}

}  // namespace

void CpuBackend::upload(const Particles& p) {
  m_particles = p;
  m_active.assign(p.size(), 1);
  m_tree = {};
  m_groups = {};
}

int CpuBackend::openKicks(const Clock& clock, const SimParams& p) {
  StageTimer timer(m_profile, Stage::Predict);
  Particles& s = m_particles;
  int deepest = 0;
#pragma omp parallel for reduction(max : deepest)
  for (std::size_t i = 0; i < s.size(); ++i) {
    // Bins from a deeper clock (before a change of maxBinDepth) are clamped to this one's.
    int bin = s.bin[i] < clock.depth ? s.bin[i] : clock.depth;
    if (isActive(bin, clock.tick, clock.depth)) {
      const int wanted = wantedBin(accMagnitude(s.accPot[i]), p.softening, p.eta,
                                   static_cast<float>(clock.dtMax), clock.depth);
      bin = nextBin(wanted, clock.tick, clock.depth);
      s.bin[i] = static_cast<std::uint8_t>(bin);
      kick(s.vel[i], s.accPot[i], 0.5f * clock.binDt(bin));
    }
    deepest = bin > deepest ? bin : deepest;
  }
  return deepest;
}

void CpuBackend::drift(float dt) {
  StageTimer timer(m_profile, Stage::Predict);
  Particles& s = m_particles;
#pragma omp parallel for
  for (std::size_t i = 0; i < s.size(); ++i) sim::drift(s.posMass[i], s.vel[i], dt);
}

void CpuBackend::computeForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                               bool oldAccValid) {
  Particles& s = m_particles;
  KeyFrame frame;
  {
    StageTimer timer(m_profile, Stage::BoundingBox);
    frame = keyFrameFor(cpu::boundingBox(s.posMass));
  }
  std::vector<std::uint64_t> keys;
  {
    StageTimer timer(m_profile, Stage::Keys);
    keys = cpu::computeKeys(s.posMass, frame, p.curve);
  }
  {
    StageTimer timer(m_profile, Stage::Sort);
    const std::vector<std::uint32_t> order = cpu::sortOrder(keys);
    cpu::reorder(s, order);
    std::vector<std::uint64_t> sorted(keys.size());
    for (std::size_t k = 0; k < order.size(); ++k) sorted[k] = keys[order[k]];
    keys.swap(sorted);
  }
  {
    StageTimer timer(m_profile, Stage::Tree);
    m_tree = cpu::buildTree(keys, frame, p.nLeaf);
  }
  // The acceleration MAC needs |a_old|; before the first evaluation it falls back to θ.
  MacSetup mac{static_cast<MacCode>(p.mac), p.theta, effectiveMacParam(p)};
  if (mac.code == MacCode::Acceleration && !oldAccValid) mac.code = MacCode::BarnesHut;
  {
    StageTimer timer(m_profile, Stage::Moments);
    cpu::computeMoments(m_tree, s.posMass, mac);
  }
  {
    StageTimer timer(m_profile, Stage::Groups);
    m_active.resize(s.size());
#pragma omp parallel for
    for (std::size_t i = 0; i < s.size(); ++i) {
      m_active[i] = targets == ForceTargets::All || isActive(s.bin[i], clock.tick, clock.depth);
    }
    m_groups = cpu::buildGroups(m_tree, s.posMass, s.accPot, m_active, p.nGroup);
  }
  {
    StageTimer timer(m_profile, Stage::Walk);
    const cpu::WalkSettings settings{mac, p.quadrupole, p.softening};
    const InteractionCounts counts =
        cpu::walkGroups(m_tree, m_groups, s.posMass, m_active, settings, s.accPot);
    m_profile.interactions.cell += counts.cell;
    m_profile.interactions.particle += counts.particle;
    m_profile.interactions.targets += counts.targets;
  }
}

void CpuBackend::closeKicks(const Clock& clock) {
  StageTimer timer(m_profile, Stage::Integrate);
  Particles& s = m_particles;
#pragma omp parallel for
  for (std::size_t i = 0; i < s.size(); ++i) {
    const int bin = s.bin[i];
    if (isActive(bin, clock.tick, clock.depth)) kick(s.vel[i], s.accPot[i], 0.5f * clock.binDt(bin));
  }
}

std::vector<std::uint32_t> CpuBackend::nonFiniteIds(std::size_t max) const {
  // Positions, then velocities, then forces: one runaway particle soon makes every force
  // (and through the kicks every velocity) NaN, and it is the one worth naming.
  const Particles& s = m_particles;
  const std::vector<Vec4>* tiers[] = {&s.posMass, &s.vel, &s.accPot};
  std::vector<std::uint32_t> ids;
  for (const std::vector<Vec4>* tier : tiers) {
    for (std::size_t i = 0; i < s.size() && ids.size() < max; ++i) {
      if (!finite((*tier)[i])) ids.push_back(s.id[i]);
    }
    if (!ids.empty()) break;
  }
  return ids;
}

std::unique_ptr<Backend> makeCpuBackend() { return std::make_unique<CpuBackend>(); }

}  // namespace bhviz::sim
