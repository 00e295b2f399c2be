#pragma once
// When to rebuild the tree, tuned while running (after GOTHIC, Miki & Umemura 2017, §2.6 and
// Appendix C). Between rebuilds a force evaluation refits the last tree (Backend::refitForces):
// cheaper than a rebuild by the bbox, keys, sort and topology stages, but as the particles move
// the refitted cells grow and overlap, and the walk slows. The tuner measures that slowing and
// rebuilds where it costs more than a rebuild.
//
// What is measured. Evaluations come in kinds: under block steps, those at ticks with the same
// shallowest active bin give forces to about the same particles (every particle at a full
// step's end, the centre's few in between), whose walk times differ by far more than any aging
// (measured on M31: 1.2 ms for 25,000 central targets, 5.5 ms for all 10⁶). So each refitted
// evaluation is held against the last rebuilt one of its kind, per target:
//   extra = walkMs − T·(walkMs / T of the kind's last rebuilt evaluation),
// a sample of T·g(x), g the extra walk time per target at age x (simulated time since the
// rebuild). Three forms of g are fitted by least squares, as GOTHIC does, and the one with the
// smallest reduced χ² (SSE over the degrees of freedom) chosen:
//   linear     g = b·x
//   power law  g = b·x^c
//   parabolic  g = b·x + c·x²
// The samples of the last kWindow refits are fitted, across rebuilds: how fast a tree ages is a
// property of the system, which changes slowly.
//
// When to rebuild. With R what a rebuild costs beyond a refit, the caller says which evaluations
// lie ahead (Outlook: their spacing in simulated time and their targets T_k, the current one
// first), and the tuner finds the cheapest plan of rebuilds over them: each refitted evaluation
// costs T_k·g(its age), each rebuild R (dynamic programming over where the next rebuild falls,
// O(H²) sums of precomputed g). It rebuilds now when the cheapest plan does. Under block steps the
// evaluations' targets differ by 40× (M31 at 2²³: the centre's 217,000 between steps of 0.76,
// 2.5, 5 and 8.4 million), and the plan refits the small ones, whose aging costs less than a
// rebuild, and rebuilds before the large ones. The rule it replaces held one rate W of targets per
// unit of time against the aging (GOTHIC's interval, where W·(A·g(A) − ∫₀^A g) = R), which cannot
// tell them apart (docs/BENCHMARKS.md, "Rebuilds planned"). Past the horizon (kHorizon
// evaluations) the plan costs nothing: where the best interval is longer, the plan rebuilds a
// little late (on a tree that ages slowly, where that costs little). Without a fit the tuner
// refits once to measure (a probe), and probes again when its last measurement is kProbeAfter
// rebuilds old, or later where the last probe cost more: a probe's extra walk is held to an
// eighth of the rebuilds' time since the one before (kProbeShare; an NFW sphere of 2²³ stepped by
// 1/8 refitted once at 24 times a rebuild's cost, and every 33 evaluations that was 6 % of the
// run). Where the evaluation's groups are many and its walk dear, the caller probes by a sample
// of them walked on the refitted tree instead, and rebuilds (Backend::probeRefit, recordProbe:
// 3.8 ms there against 25). GOTHIC's interval of the mean rate is still reported (bestInterval).
//
// A third choice, where the backend has it (Outlook::aroundMs): a rebuild around the targets
// (Backend::rebuildAroundTargets), which makes the tree fresh where the evaluation's targets
// are for a cost A_k that grows with the particles around them. The plan takes it two ways: as
// a cap, an evaluation that is not rebuilt costing min(T_k·g(age), A_k) while the tree's age runs
// on through it (outside the cover the tree is the last rebuild's); or as a reset for the
// evaluations after it with no more targets (under block steps the deeper substeps, whose
// targets lie in its cover: Simulation::treeAge gives them their age since it), so long as the
// next one with more targets is a reset itself. Such an evaluation gives no aging sample. Its
// walk is taken as the kind's fresh one where it is within kAroundLikeFresh of it (M31's centre:
// as fast as a rebuilt tree's, or faster than a cold first rebuild's); beyond that the
// difference is its own cost, charged to the rebuild around the targets (RebuildTunerState::
// aroundMs) and not to the fresh walk that every aging sample is measured from (an NFW sphere of
// 2²³: 32 % more interactions a target than rebuilt, the tree outside the cover aged).

#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

namespace bhviz::sim {

/// One refitted evaluation as the fits see it.
struct AgingSample {
  double age = 0.0;      ///< simulated time since the tree's rebuild [time]
  double targets = 0.0;  ///< particles given forces [1]
  double extraMs = 0.0;  ///< walk time beyond a fresh tree's for those targets [ms]
};

enum class AgingModel : std::uint8_t { None, Linear, PowerLaw, Parabolic };
std::string_view toString(AgingModel m);

/// What a force evaluation does with the tree.
enum class TreeChoice : std::uint8_t {
  Refit,          ///< the last tree refitted (Backend::refitForces)
  AroundTargets,  ///< rebuilt around the targets (Backend::rebuildAroundTargets)
  Rebuild,        ///< rebuilt (Backend::computeForces)
};
std::string_view toString(TreeChoice c);

/// extraMs ≈ targets·g(age), g one of the three forms above.
struct AgingFit {
  AgingModel model = AgingModel::None;
  double b = 0.0;  ///< [ms / time] (linear, parabolic) or [ms / time^c] (power law), per target
  double c = 0.0;  ///< the power law's exponent [1], or the parabola's [ms / time²] per target
  double reducedChi2 = std::numeric_limits<double>::infinity();  ///< SSE / (samples − fitted) [ms²]

  /// g(x) [ms per target]
  double growth(double age) const;
  /// x·g(x) − ∫₀^x g per target [ms·time]: GOTHIC's interval A has W·excess(A) = R
  /// (RebuildTunerState::bestInterval)
  double excess(double age) const;
};

/// Least squares of one model (None when there are too few samples for it: a curve needs
/// three degrees of freedom left, or timing noise alone fits a steep one).
AgingFit fitAging(AgingModel model, const std::vector<AgingSample>& samples);
/// The fit with the smallest reduced χ²; the line through one sample when there is one.
AgingFit fitBestAging(const std::vector<AgingSample>& samples);

/// What the tuner knows and chose, for the panels and the statistics.
struct RebuildTunerState {
  AgingFit fit;                 ///< of the last refits' samples
  int samples = 0;              ///< aging samples fitted
  int evaluations = 0;          ///< force evaluations since the last rebuild, that one included
  double age = 0.0;             ///< of the last evaluation [time]
  double rebuildMs = 0.0;       ///< R: what a rebuild costs beyond a refit [ms]
  double targetsPerTime = 0.0;  ///< W [1 / time]
  /// GOTHIC's interval for the mean rate W, where W·excess(A) = R [time]; ∞: no aging seen. Shown
  /// for comparison: the tuner plans over the evaluations ahead instead (shouldRebuild).
  double bestInterval = std::numeric_limits<double>::infinity();
  double predictedWalkMs = 0.0;     ///< the last evaluation's walk time as predicted [ms]
  double measuredWalkMs = 0.0;      ///< and as measured [ms]
  std::uint64_t rebuilds = 0;       ///< force evaluations that rebuilt, since the start [1]
  std::uint64_t refits = 0;         ///< and that refitted [1]
  std::uint64_t aroundTargets = 0;  ///< and that rebuilt around their targets [1]
  /// What the last rebuild around the targets cost beyond a refit [ms]: its stages, and its walk
  /// beyond the kind's fresh one where that was more than kAroundLikeFresh of it.
  double aroundMs = 0.0;
  /// Rebuilds after the newest aging sample at which the tuner probes the aging again [1] (0:
  /// kProbeAfter, none measured yet).
  int probeAfter = 0;
  std::uint64_t sampledProbes = 0;  ///< probes made by a sample, without a refit (recordProbe) [1]
  TreeChoice last = TreeChoice::Rebuild;  ///< the last evaluation's choice
  /// Force evaluations recorded, whatever they did with the tree [1].
  std::uint64_t recorded() const { return rebuilds + refits + aroundTargets; }
};

class RebuildTuner {
 public:
  /// Refits in a row at most (a tree that shows no aging is rebuilt now and then all the same).
  static constexpr int kMaxRefits = 128;
  /// Aging samples fitted: those of the last kWindow refits.
  static constexpr std::size_t kWindow = 48;
  /// A fit whose newest sample is this many rebuilds old is refreshed by a probe, or more: the
  /// rebuilds between two probes cost at least 1 / kProbeShare times the last probe's extra walk.
  static constexpr int kProbeAfter = 32;
  static constexpr double kProbeShare = 0.125;
  static constexpr int kMaxProbeAfter = 1024;  ///< a system that changes is measured again
  /// A rebuild around the targets whose walk takes at most this many times the kind's fresh walk
  /// is taken to walk fresh (the rest is timing noise); beyond it the excess is its own cost.
  static constexpr double kAroundLikeFresh = 1.1;
  /// Kinds of evaluation told apart (the caller's numbering, e.g. the shallowest active bin
  /// and the group size; more are folded into the last).
  static constexpr int kKinds = 128;

  /// An unmeasured rebuild around the targets is guessed at this share of a rebuild's cost, so
  /// that a kind is tried once where its aging comes near that (Outlook::aroundMs).
  static constexpr double kAroundGuess = 0.25;
  /// Evaluations planned over at most (Outlook::targets beyond it are not read).
  static constexpr std::size_t kHorizon = 128;
  /// The evaluations ahead as the caller expects them.
  struct Outlook {
    double spacing = 0.0;  ///< simulated time from one to the next [time]
    /// Particles each gives forces to [1], the current evaluation first (0: not known; the mean
    /// of the last evaluations' is taken).
    std::vector<double> targets;
    /// The age of the tree where each one walks it if nothing is rebuilt before it [time] (after
    /// a rebuild around some targets, a deeper evaluation's is younger than a larger one's:
    /// Simulation::treeAge); empty, or for those beyond it: the current one's plus the spacing.
    std::vector<double> ages;
    /// What a rebuild around each one's targets would cost beyond a refit [ms], as its kind's
    /// last one did (< 0: not measured yet, kAroundGuess of a rebuild guessed; ∞: not to be tried;
    /// empty: the backend has no such rebuild).
    std::vector<double> aroundMs;
  };
  /// What the evaluation of `kind` at `age` (time since the last rebuild), the first of `ahead`,
  /// should do with the tree (`ahead` is the tuner's to change: its unknown targets filled in).
  TreeChoice choose(double age, int kind, Outlook ahead) const;
  /// Whether choose() rebuilds.
  bool shouldRebuild(double age, int kind, Outlook ahead) const {
    return choose(age, kind, std::move(ahead)) == TreeChoice::Rebuild;
  }
  /// After each evaluation: what it did with the tree, its kind, simulated time, age (0 for a
  /// rebuild), targets and walk time, and for a rebuild (or one around the targets) the time of
  /// the stages a refit skips. Negative times: not measured (a cold first evaluation), counted
  /// only.
  void record(TreeChoice made, int kind, double time, double age, double targets, double walkMs,
              double rebuildMs);
  /// Whether a refit that choose() returns now is a probe (no fit yet, or an old one).
  bool probing() const {
    return m_state.fit.model == AgingModel::None || m_samplesAge >= m_probeAfter;
  }
  /// A probe made without a refit's walk (Backend::probeRefit): the tree at `age` would have
  /// walked `extraMs` longer for these `targets` than the fresh one this evaluation walked (which
  /// record() took as a rebuild), and the probe took `costMs`. An aging sample as a refit's is;
  /// the next probe waits as after a refit that cost `costMs` more than its fresh walk.
  void recordProbe(double age, double targets, double extraMs, double costMs);
  /// The next probe after kProbeAfter rebuilds, however long the last one asked to wait (the
  /// parameters changed, and the aging with them).
  void resetProbeWait();
  /// A fresh walk of `targets` in an evaluation of `kind`, as the kind's last rebuilds walked [ms];
  /// negative where none was measured.
  double freshWalkMs(int kind, double targets) const {
    const double perTarget = m_fresh[kindIndex(kind)].msPerTarget;
    return perTarget < 0.0 ? -1.0 : perTarget * targets;
  }
  const RebuildTunerState& state() const { return m_state; }
  /// Back to simulated time `time` (a restored state): the evaluations measured after it are
  /// forgotten from the targets-per-time window (what was learnt of the aging stays).
  void rewind(double time);
  /// The walk time the tree's aging adds at `age` for `targets`, by the current fit [ms].
  double agingMs(double age, double targets) const {
    return m_state.fit.model == AgingModel::None ? 0.0 : targets * m_state.fit.growth(age);
  }

 private:
  struct Fresh {
    double msPerTarget = -1.0;  ///< of the kind's last rebuilt evaluation; < 0: none yet
  };
  static int kindIndex(int kind) { return kind < 0 ? 0 : kind >= kKinds ? kKinds - 1 : kind; }

  /// An aging sample into the window, and the fit of the window.
  void addSample(const AgingSample& sample);
  /// The wait before the next probe after one that cost `costMs` beyond the evaluation's own.
  void waitAfterProbe(double costMs);

  std::array<Fresh, kKinds> m_fresh{};
  std::deque<AgingSample> m_samples;               // of the last kWindow refits
  int m_samplesAge = kProbeAfter;                  // rebuilds since the newest sample
  int m_probeAfter = kProbeAfter;                  // m_samplesAge that brings a probe
  double m_rebuildMs = 0.0;                        // smoothed over rebuilds
  std::deque<std::pair<double, double>> m_recent;  // (time, targets) of the last evaluations
  RebuildTunerState m_state;
};

}  // namespace bhviz::sim
