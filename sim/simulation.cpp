#include "sim/simulation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

namespace bhviz::sim {

namespace {

int clockDepth(const SimParams& p) {
  return p.stepping == TimeStepping::Shared ? 0 : p.maxBinDepth;
}

// The clock's time must resolve its smallest step (one tick) to this fraction of a step.
constexpr double kTickResolution = 1e-3;

// Far from 0 the doubles are too sparse for a small step: at t = 1e300 (a snapshot's time, say)
// t + tick == t and the clock would stand still, and well before that every time it reports is
// rounded by a good part of a step. Refused while the clock is set up, naming both numbers.
void checkTimeResolvesTick(const char* what, double t, const Clock& c) {
  const double spacing = std::nextafter(std::abs(t), HUGE_VAL) - std::abs(t);
  if (spacing <= kTickResolution * c.tickDt()) return;
  std::ostringstream s;
  s << what << " t = " << t << " is too large for the smallest step " << c.tickDt() << " (dtMax "
    << c.dtMax << " / 2^" << c.depth << "): doubles near t are " << spacing
    << " apart, so t + step is not resolved to " << kTickResolution
    << " of a step; use a larger dtMax, fewer bins or a time nearer 0";
  throw InvalidParameter(s.str());
}

}  // namespace

Simulation::Simulation(std::unique_ptr<Backend> backend, const Particles& initial,
                       const SimParams& params, double startTime)
    : m_backend(std::move(backend)), m_params(params) {
  validate(params, m_backend->traits().limits, m_backend->name());
  if (initial.size() == 0) throw InvalidParameter("the simulation needs at least one particle");
  if (!std::isfinite(startTime)) throw InvalidParameter("the start time must be finite");
  initial.validate();
  m_clock = Clock{startTime, 0, clockDepth(params), params.dtMax};
  m_targetsByBin.fill(-1.0);
  m_groupsByBin.fill(-1.0);
  m_aroundMsByBin.fill(-1.0);
  checkTimeResolvesTick("the start time", startTime, m_clock);
  Particles start = initial;
  std::fill(start.bin.begin(), start.bin.end(), std::uint8_t{0});
  m_backend->upload(start);
  m_backend->resetProfile();
  // The first walk runs cold (first launches, caches): its time would mislead the tuners.
  const Evaluation first{};
  const TreeChoice made = computeForces(first, ForceTargets::All, false);
  const std::vector<std::uint32_t> bad = m_backend->nonFiniteIds(kNamedNonFinite);
  recordEvaluation(first, made, false);
  m_last = m_backend->profile();
  throwIfNonFinite(bad);
}

void Simulation::setParams(const SimParams& params) {
  requireNoPendingSubstep("setParams");
  validate(params, m_backend->traits().limits, m_backend->name());
  checkTimeResolvesTick("the time", time(), Clock{time(), 0, clockDepth(params), params.dtMax});
  if (params != m_params) {
    // Another run from here on: the logged choices of the first one no longer apply, nor the
    // measured costs of rebuilds around the targets (N_leaf, the curve and the MAC set them).
    m_replayUntil = 0;
    m_aroundMsByBin.fill(-1.0);
    m_tuner.resetProbeWait();  // the aging may differ under them
    m_generation = ++m_generations;
    // Its candidates are fractions of N_group, timed under one MAC: measured sizes of another
    // N_group or MAC mean nothing.
    if (params.nGroup != m_params.nGroup || params.mac != m_params.mac) {
      m_groupTuner = GroupTuner{};
    }
  }
  m_params = params;
}

void Simulation::applyClockSettings() {
  // Only where every particle has finished its step may the clock change its grid.
  const Clock before = m_clock;
  m_clock.origin = m_clock.time();
  m_clock.tick = 0;
  m_clock.depth = clockDepth(m_params);
  m_clock.dtMax = m_params.dtMax;
  if (m_clock.depth != before.depth || m_clock.dtMax != before.dtMax) {
    m_targetsByBin.fill(-1.0);  // the bins mean other steps now
    m_groupsByBin.fill(-1.0);
    m_aroundMsByBin.fill(-1.0);
  }
}

void Simulation::substep() {
  beginSubstep();
  endSubstep();
}

void Simulation::beginSubstep() {
  requireNoPendingSubstep("beginSubstep");
  if (m_clock.synchronized()) applyClockSettings();
  m_backend->resetProfile();
  const int deepest = m_backend->openKicks(m_clock, m_params);
  // The next tick at which some particle ends its step: the deepest occupied bin's next boundary.
  const std::uint64_t period = binPeriod(deepest, m_clock.depth);
  const std::uint64_t next = m_clock.tick - m_clock.tick % period + period;
  m_backend->drift(static_cast<float>(static_cast<double>(next - m_clock.tick) * m_clock.tickDt()));
  m_clock.tick = next;
  const Evaluation e = chooseEvaluation(period);
  const TreeChoice made = computeForces(e, ForceTargets::Active, true);
  m_backend->closeKicks(m_clock);
  // On demand a step end with the potentials is the exception: its walk (5-11 % longer) would
  // mislead the tuners, which compare the walks of one kind of evaluation.
  m_pending = PendingSubstep{e, made, !walkUntimed()};
}

void Simulation::endSubstep() {
  if (!m_pending) return;
  PendingSubstep q = *m_pending;
  m_pending.reset();
  // The substep's launches are queued (the CUDA backend waits for nothing in between but a
  // rebuild's level table, and the deepest bin where its close kicks could not forecast it); the
  // check waits for them, and with it everything the profile reads has arrived.
  const std::vector<std::uint32_t> bad = m_backend->nonFiniteIds(kNamedNonFinite);
  recordEvaluation(q.e, q.made, q.timed);
  m_last = m_backend->profile();
  m_total += m_last;
  q.e.tree = q.made;  // a rebuild also where the backend could not refit
  q.e.generation = m_generation;
  if (m_choices.size() <= m_substeps) m_choices.resize(m_substeps + 1);
  m_choices[m_substeps] = q.e;
  ++m_substeps;
  throwIfNonFinite(bad);
}

void Simulation::requireNoPendingSubstep(const char* what) const {
  if (!m_pending) return;
  throw std::logic_error(std::string("Simulation::") + what +
                         " while a substep is pending (endSubstep first)");
}

bool Simulation::computePotentialsNow() {
  requireNoPendingSubstep("computePotentialsNow");
  if (m_potentialsCurrent) return true;
  if (!m_clock.synchronized() || !m_backend->recomputePotentials()) return false;
  m_potentialsCurrent = true;
  m_potentialRequested = false;
  return true;
}

void Simulation::advance(int steps) {
  requireNoPendingSubstep("advance");
  for (int s = 0; s < steps; ++s) {
    do {
      substep();
    } while (!m_clock.synchronized());
  }
}

void Simulation::recomputeForces() {
  requireNoPendingSubstep("recomputeForces");
  if (!m_clock.synchronized()) {
    throw std::logic_error("recomputeForces needs every particle synchronised");
  }
  m_backend->resetProfile();
  const Evaluation all{};
  const TreeChoice made = computeForces(all, ForceTargets::All, true);
  const std::vector<std::uint32_t> bad = m_backend->nonFiniteIds(kNamedNonFinite);
  recordEvaluation(all, made, true);
  throwIfNonFinite(bad);
}

Simulation::Evaluation Simulation::chooseEvaluation(std::uint64_t period) const {
  if (m_substeps < m_replayUntil) {
    Evaluation e = m_choices[m_substeps];
    if (m_rebuildNext) e.tree = TreeChoice::Rebuild;
    return e;
  }
  if (m_params.rebuildInterval != kRebuildAuto) {
    const bool rebuild = m_rebuildNext || m_sinceRebuild + 1 >= m_params.rebuildInterval;
    return {rebuild ? TreeChoice::Rebuild : TreeChoice::Refit, 0};
  }
  // The evaluation's kind (its shallowest active bin).
  const int kind = shallowestAlignedBin(m_clock.tick, m_clock.depth);
  Evaluation e;
  // The acceleration MAC tests each cell against the group's smallest |a_old|: a smaller group
  // walks faster and less accurately, so its size is not the tuner's to choose (α sets the
  // accuracy). Under the geometric MACs the tuner chooses it by time. (Measured since: there too a
  // smaller box accepts cells sooner, trading accuracy as a larger θ would, in
  // bench/results/cpu-2core-2026-11-29-group-runs-trade.txt; the policy is left as it was. The
  // block substeps' few groups cut into runs, sim/common/group_runs.h, are another matter: a
  // fixed rule that keeps each group's |a_old| minimum, whatever the timings.)
  e.groups = m_params.mac == MacKind::Acceleration
                 ? std::uint8_t{0}
                 : static_cast<std::uint8_t>(m_groupTuner.choose(kind, m_params.nGroup));
  e.tree = m_rebuildNext
               ? TreeChoice::Rebuild
               : m_tuner.choose(treeAge(kind), tunerKind(kind, e.groups), outlook(period));
  return e;
}

RebuildTuner::Outlook Simulation::outlook(std::uint64_t period) const {
  // The evaluations ahead at the deepest bin's period (as long as it stays the deepest), each
  // with the targets the last one of its kind had (every particle where all are synchronised).
  RebuildTuner::Outlook ahead;
  ahead.spacing = double(period) * m_clock.tickDt();
  ahead.targets.resize(RebuildTuner::kHorizon);
  const bool around = m_backend->traits().rebuildsAroundTargets;
  if (around) ahead.aroundMs.resize(RebuildTuner::kHorizon);
  const double n = double(m_backend->size());
  // Each one's tree age if nothing is rebuilt before it (treeAge's rule ahead: an evaluation of a
  // bin shallower than the last rebuild around the targets, refitting, ends its youth).
  ahead.ages.resize(RebuildTuner::kHorizon);
  bool aroundValid = m_aroundTime > m_treeTime;
  for (std::size_t k = 0; k < ahead.targets.size(); ++k) {
    const int kind = shallowestAlignedBin(m_clock.tick + k * period, m_clock.depth);
    const bool inCover = aroundValid && kind >= m_aroundBin;
    ahead.ages[k] =
        m_clock.time() + double(k) * ahead.spacing - (inCover ? m_aroundTime : m_treeTime);
    aroundValid = inCover;
    const double known = m_targetsByBin[kind];
    ahead.targets[k] = known >= 0.0 ? known : kind == 0 ? n : 0.0;
    // Targets of at least the cover's share of every particle are covered by the smallest cell
    // holding them all, most often the root: a rebuild around them is a whole one in the last
    // frame, with the cover's passes on top (measured on M31 at 2^23: 2.2 ms against 1.9).
    if (around) {
      ahead.aroundMs[k] = ahead.targets[k] >= kAroundTargetsShare * n
                              ? std::numeric_limits<double>::infinity()
                              : m_aroundMsByBin[kind];
    }
  }
  return ahead;
}

double Simulation::treeAge(int bin) const {
  const bool inCover = m_aroundTime > m_treeTime && bin >= m_aroundBin;
  return m_clock.time() - (inCover ? m_aroundTime : m_treeTime);
}

int Simulation::tunerKind(int kind, int groups) {
  // The fresh walk of a kind depends on its group size: each pair is a kind of its own.
  return std::min(kind, RebuildTuner::kKinds / GroupTuner::kCandidates - 1) *
             GroupTuner::kCandidates +
         groups;
}

TreeChoice Simulation::computeForces(Evaluation e, ForceTargets targets, bool oldAccValid) {
  m_sampledProbe.reset();  // (one left by an evaluation that threw is not this one's)
  SimParams p = m_params;
  p.nGroup = GroupTuner::groupSize(m_params.nGroup, e.groups);
  // Every step ends here (or every particle is a target): the potentials are computed, or,
  // on demand and unasked, go stale.
  if (evaluatesPotential(m_clock, targets)) {
    const bool wanted =
        !m_potentialOnDemand || m_potentialRequested || targets == ForceTargets::All;
    m_backend->setPotentialWanted(wanted);
    m_potentialsCurrent = wanted;
    if (wanted) m_potentialRequested = false;
  }
  TreeChoice made = TreeChoice::Rebuild;
  const bool around = m_backend->traits().rebuildsAroundTargets;
  if (e.tree == TreeChoice::Rebuild) {
    m_backend->computeForces(m_clock, p, targets, oldAccValid);
  } else if (e.tree == TreeChoice::AroundTargets && around) {
    if (m_backend->rebuildAroundTargets(m_clock, p, targets, oldAccValid)) {
      made = TreeChoice::AroundTargets;
    }
  } else if (probesBySample(p, targets, oldAccValid, e.groups)) {
    m_backend->computeForces(m_clock, p, targets, oldAccValid);
  } else if (m_backend->refitForces(m_clock, p, targets, oldAccValid)) {
    made = TreeChoice::Refit;
  }
  m_rebuildNext = false;
  if (made == TreeChoice::Rebuild) {
    m_treeTime = m_clock.time();
    m_sinceRebuild = 0;
    for (std::size_t b = 0; b < m_aroundMsByBin.size(); ++b) {
      if (++m_aroundRebuildsByBin[b] >= kAroundRemeasure) m_aroundMsByBin[b] = -1.0;
    }
  } else {
    ++m_sinceRebuild;  // around the targets too: elsewhere the tree ages on
  }
  const int bin = shallowestAlignedBin(m_clock.tick, m_clock.depth);
  if (made == TreeChoice::AroundTargets) {
    m_aroundTime = m_clock.time();
    m_aroundBin = bin;
  } else if (made == TreeChoice::Refit && bin < m_aroundBin) {
    m_aroundTime = -std::numeric_limits<double>::infinity();
  }
  m_lastGroupSize = p.nGroup;
  return made;
}

bool Simulation::walkUntimed() const {
  return m_potentialOnDemand && m_clock.synchronized() && m_potentialsCurrent;
}

bool Simulation::probesBySample(const SimParams& p, ForceTargets targets, bool oldAccValid,
                                int groups) {
  // Not in a replay, which follows the log (its refits refit), nor where the walk goes untimed
  // (a step end that computes the potentials asked for: recordEvaluation).
  if (m_params.rebuildInterval != kRebuildAuto || m_substeps < m_replayUntil || walkUntimed() ||
      !m_tuner.probing()) {
    return false;
  }
  // A refit the tuner asks for to measure the aging costs its walk's growth, which on a tree that
  // ages badly is many rebuilds (an NFW sphere of 2²³ stepped by 1/8: 25 ms against 1.3). Where
  // the groups are many, a sample of them walked on the refitted tree tells it for much less.
  const int kind = shallowestAlignedBin(m_clock.tick, m_clock.depth);
  const double all = double(m_backend->size());
  const double expected = targets == ForceTargets::All || kind == 0 ? all : m_targetsByBin[kind];
  // The groups as the kind's last evaluation made them (partly filled under block steps).
  const double made = m_groupsByBin[kind] > 0.0 ? m_groupsByBin[kind] : expected / p.nGroup;
  const double every = std::floor(made / double(kProbeGroups));
  if (!(every >= double(kProbeMinEvery))) return false;
  // The sample costs about one group's walk on the refitted tree and the rebuild after it; a
  // refit's walk where that would be little is no dearer, and it walks the evaluation (M31's
  // centre at 2²³: 1.0 ms against a rebuild's 1.9, and refits pay there).
  const double fresh = m_tuner.freshWalkMs(tunerKind(kind, groups), expected);
  if (!(fresh > kProbeSampleAbove * m_tuner.state().rebuildMs)) return false;
  const double age = treeAge(kind);
  if (!m_backend->probeRefit(m_clock, p, targets, oldAccValid, static_cast<std::uint32_t>(every))) {
    return false;
  }
  m_sampledProbe = age;
  return true;
}

void Simulation::recordEvaluation(Evaluation e, TreeChoice made, bool timed) {
  const StepProfile& prof = m_backend->profile();
  const int kind = shallowestAlignedBin(m_clock.tick, m_clock.depth);
  const double given = double(prof.interactions.targets);
  const double walkMs = timed ? prof[Stage::Walk] : -1.0;
  const double age = treeAge(kind);
  m_tuner.record(made, tunerKind(kind, e.groups), m_clock.time(), age, given, walkMs,
                 timed ? prof.rebuildMs() : -1.0);
  // The group tuner compares sizes on fresh trees: a refit's aging is taken out (where it is
  // not known yet, the refit is not recorded). A tree rebuilt around the targets is fresh there.
  const bool fresh = made != TreeChoice::Refit;
  const bool agingKnown = fresh || m_tuner.state().fit.model != AgingModel::None;
  // (Not under the acceleration MAC, whose groups it does not size: chooseEvaluation.)
  if (timed && given > 0.0 && agingKnown && m_params.mac != MacKind::Acceleration) {
    const double aging = fresh ? 0.0 : m_tuner.agingMs(age, given);
    m_groupTuner.record(kind, e.groups, (walkMs - aging) / given, m_params.nGroup);
  }
  // A probe by sample: the refitted tree's interactions a target against the fresh one's just
  // walked, in the fresh walk's time per interaction.
  if (const std::optional<double> probeAge = std::exchange(m_sampledProbe, std::nullopt)) {
    const Backend::RefitProbe probe = m_backend->refitProbe();
    const double fresh =
        given > 0.0 ? double(prof.interactions.cell + prof.interactions.particle) / given : 0.0;
    if (timed && probe.interactionsPerTarget >= 0.0 && fresh > 0.0) {
      m_tuner.recordProbe(*probeAge, given, walkMs * (probe.interactionsPerTarget / fresh - 1.0),
                          probe.ms);
    }
  }
  m_targetsByBin[kind] = given;
  m_groupsByBin[kind] = double(prof.interactions.groups);
  if (timed && made == TreeChoice::AroundTargets && std::exchange(m_aroundWarm, true)) {
    // Its stages, and its walk beyond the kind's fresh one where that was more than noise.
    const double cost = m_tuner.state().aroundMs;
    double& a = m_aroundMsByBin[kind];
    a = a < 0.0 ? cost : 0.5 * (a + cost);  // smoothed, as R is
    m_aroundRebuildsByBin[kind] = 0;
  }
}

std::unique_ptr<KeptState> Simulation::keep(std::size_t deviceBytesFree) const {
  requireNoPendingSubstep("keep");
  auto state = std::make_unique<KeptState>();
  state->clock = m_clock;
  state->params = m_params;
  state->substeps = m_substeps;
  state->generation = m_generation;
  state->potentialsCurrent = m_potentialsCurrent;
  state->backend = m_backend->keepState(deviceBytesFree);
  // A replay from here starts with a rebuild (the tree is not kept), so the run must rebuild
  // here too. Not while replaying: the log decides there, and a keep (the window keeps at frame
  // ends, which fall elsewhere the second time) must not change the run it replays.
  if (m_substeps >= m_replayUntil) m_rebuildNext = true;
  return state;
}

void Simulation::restore(const KeptState& state) {
  requireNoPendingSubstep("restore");
  if (state.backend == nullptr) throw std::invalid_argument("restore: an empty state");
  m_backend->restoreState(*state.backend);
  m_clock = state.clock;
  m_params = state.params;
  m_substeps = state.substeps;
  m_rebuildNext = true;  // the tree was not kept
  m_aroundTime = -std::numeric_limits<double>::infinity();
  m_generation = state.generation;
  m_potentialsCurrent = state.potentialsCurrent;
  m_tuner.rewind(state.clock.time());
  // The log holds what ran after this state, under its parameters, until they changed.
  m_replayUntil = m_substeps;
  while (m_replayUntil < m_choices.size() && m_choices[m_replayUntil].generation == m_generation) {
    ++m_replayUntil;
  }
}

Diagnostics Simulation::diagnostics() const {
  Diagnostics d = m_backend->diagnostics(m_clock);
  if (!m_potentialsCurrent) d.potential = std::numeric_limits<double>::quiet_NaN();
  return d;
}

Particles Simulation::particles() const {
  Particles p;
  m_backend->download(p);
  return p;
}

void Simulation::throwIfNonFinite(const std::vector<std::uint32_t>& ids) const {
  if (ids.empty()) return;
  std::ostringstream s;
  s << "the state became non-finite (NaN or Inf) at t = " << m_clock.time() << " in particle";
  s << (ids.size() > 1 ? "s" : "");
  for (std::size_t k = 0; k < ids.size(); ++k) s << (k ? ", " : " ") << ids[k];
  if (ids.size() == kNamedNonFinite) s << ", ...";
  throw NonFiniteState(s.str(), ids);
}

}  // namespace bhviz::sim
