#include "sim/accuracy.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace bhviz::sim {

AccuracyReference makeReference(const Particles& state, float softening, std::size_t count,
                                std::uint64_t seed, const ReferenceSum& sum) {
  const std::vector<std::uint32_t> idx = sampleIndices(state.size(), count, seed);
  AccuracyReference ref;
  ref.softening = softening;
  ref.acc = sum ? sum(state, idx, softening) : directSum(state, idx, softening);
  ref.ids.reserve(idx.size());
  for (std::uint32_t i : idx) ref.ids.push_back(state.id[i]);
  return ref;
}

AccuracySample measureAccuracy(Backend& scratch, const Particles& state, const SimParams& p,
                               const AccuracyReference& ref, bool oldAccValid,
                               std::vector<double>* relative) {
  if (ref.softening != p.softening) {
    throw std::invalid_argument("measureAccuracy: the reference was summed with softening " +
                                std::to_string(ref.softening) + ", the forces use " +
                                std::to_string(p.softening));
  }
  validate(p);
  scratch.upload(state);
  const Clock clock{0.0, 0, 0, p.dtMax};
  if (readsOldAccelerations(p) && !oldAccValid) {
    scratch.computeForces(clock, p, ForceTargets::All, false);
    oldAccValid = true;
  }
  scratch.resetProfile();
  scratch.computeForces(clock, p, ForceTargets::All, oldAccValid);
  const StepProfile& prof = scratch.profile();

  Particles out;
  scratch.download(out);
  // Where each sampled id went: one pass over the state with a map of the (small) sample only.
  std::unordered_map<std::uint32_t, std::uint32_t> slotOf;
  slotOf.reserve(ref.ids.size());
  for (std::uint32_t k = 0; k < ref.ids.size(); ++k) slotOf.emplace(ref.ids[k], k);
  constexpr std::uint32_t kMissing = ~0u;
  std::vector<std::uint32_t> targets(ref.ids.size(), kMissing);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto it = slotOf.find(out.id[i]);
    if (it != slotOf.end()) targets[it->second] = static_cast<std::uint32_t>(i);
  }
  for (std::size_t k = 0; k < targets.size(); ++k) {
    if (targets[k] == kMissing) {
      throw std::invalid_argument("measureAccuracy: the reference's particle id " +
                                  std::to_string(ref.ids[k]) + " is not in the state");
    }
  }

  AccuracySample s;
  std::vector<double> rel = relativeErrors(out, targets, ref.acc);
  if (relative != nullptr) *relative = rel;
  s.error = summarizeErrors(std::move(rel));
  s.msPerForce = prof.total();
  const InteractionCounts& c = prof.interactions;
  s.interactionsPerParticle =
      c.targets > 0 ? static_cast<double>(c.cell + c.particle) / static_cast<double>(c.targets)
                    : 0.0;
  return s;
}

float sweepParam(MacKind mac, float theta) {
  const double scale = std::pow(10.0, 5.0 * (static_cast<double>(theta) - 0.5));
  switch (mac) {
    case MacKind::Multipole:
      return static_cast<float>(1e-4 * scale);
    case MacKind::Acceleration:
      return static_cast<float>(2e-3 * scale);
    default:
      return theta;
  }
}

std::vector<float> sweepThetas(float from, float to, float step) {
  if (!(from > 0.0f) || !(to <= kThetaMax) || !(from <= to)) {
    throw std::invalid_argument("the range must have 0 < FROM <= TO <= 1.5");
  }
  if (!(step > 0.0f) || !std::isfinite(step)) throw std::invalid_argument("STEP must be > 0");
  const double steps = (static_cast<double>(to) - from) / step;
  if (steps + 1.0 > static_cast<double>(kMaxSweepPoints)) {
    throw std::invalid_argument("the range holds more than " + std::to_string(kMaxSweepPoints) +
                                " values: use a larger STEP");
  }
  const auto count = static_cast<std::size_t>(std::floor(steps + 1e-6)) + 1;
  std::vector<float> thetas;
  thetas.reserve(count);
  // Each value from its index, not by repeated addition, so 0.2:1.0:0.1 ends on 1.0 exactly.
  for (std::size_t k = 0; k < count; ++k) {
    thetas.push_back(static_cast<float>(static_cast<double>(from) + static_cast<double>(k) * step));
  }
  if (thetas.back() > to) thetas.back() = to;
  return thetas;
}

SweepPoint sweepPoint(Backend& scratch, const Particles& state, const SimParams& base, MacKind mac,
                      float theta, const AccuracyReference& ref) {
  SimParams p = base;
  p.mac = mac;
  p.theta = theta;
  p.macParam =
      mac == MacKind::Multipole || mac == MacKind::Acceleration ? sweepParam(mac, theta) : 0.0f;
  return {mac, sweepParam(mac, theta), measureAccuracy(scratch, state, p, ref, false)};
}

std::vector<SweepPoint> sweep(const Particles& state, const SimParams& base,
                              const BackendFactory& makeBackend, const std::vector<MacKind>& macs,
                              const std::vector<float>& thetas, const AccuracyReference& ref) {
  std::unique_ptr<Backend> scratch = makeBackend();
  std::vector<SweepPoint> points;
  points.reserve(macs.size() * thetas.size());
  for (MacKind mac : macs) {
    for (float theta : thetas) points.push_back(sweepPoint(*scratch, state, base, mac, theta, ref));
  }
  return points;
}

std::vector<MacKind> allMacs() {
  return {MacKind::BarnesHut, MacKind::Bonsai, MacKind::Multipole, MacKind::Acceleration};
}

}  // namespace bhviz::sim
