#pragma once
// Every knob of the simulation, filled alike by the CLI, the UI and scenario files.
// Live settings (θ, MAC, ε, η, quadrupole) take effect at the next substep; clock settings
// (time-stepping mode, dtMax, maxBinDepth) at the next point where all particles are
// synchronised.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "sim/common/keys.h"
#include "sim/common/local_expansion.h"
#include "sim/common/mac.h"

namespace bhviz::sim {

/// Multipole acceptance criteria (GOTHIC §2.2). Each decides, for a group of particles and a
/// cell, whether the cell's multipole expansion is accurate enough or the cell must be opened.
enum class MacKind : std::uint8_t {
  BarnesHut,     ///< open if d < l/θ: l the geometric cell side, d from the group box to the COM
  Bonsai,        ///< open if d < l/θ + s: l the largest side of the tight box, s the COM offset
  Multipole,     ///< Warren–Salmon: open if d < b/2 + sqrt(b²/4 + sqrt(3·B2/Δ_mul))
  Acceleration,  ///< Springel: open if M·l² > α·|a_old|·d⁴ (θ-test on the first evaluation)
};

/// How the walk evaluates the near field (P2P, the particles of opened leaves).
enum class P2pMode : std::uint8_t {
  Plain,   ///< each target sums its group's leaf particles (every near pair twice)
  Mutual,  ///< each near pair once where both sides need it, the counter-force added to the
           ///< other (Newton's third law; seed 004, Shan & Lei); the same pairs as Plain
};

enum class TimeStepping : std::uint8_t {
  Shared,  ///< one step dtMax for every particle (kick–drift–kick leapfrog)
  Block,   ///< power-of-two bins: dt_i = η·sqrt(ε/|a_i|), clamped to dtMax / 2^maxBinDepth
};

struct SimParams {
  /// Multipole acceptance criterion. The acceleration MAC (α 2e-3) is the default: on the H200
  /// it gives the Bonsai test's θ 0.5 error in 0.56–0.79 of its walk time (docs/BENCHMARKS.md, "The
  /// default MAC"); its first evaluation, before |a_old| exists, is the Barnes–Hut test with θ.
  MacKind mac = MacKind::Acceleration;
  /// opening angle for bh and bonsai (and the first acceleration-MAC step) [1]
  float theta = 0.5f;
  /// Δ_mul [acceleration] for multipole, α [1] for acceleration; 0 = the MAC's default
  float macParam = 0.0f;
  bool quadrupole = true;        ///< add the quadrupole term to cell interactions
  int nLeaf = 16;                ///< a cell with more particles than this is split [particles]
  int nGroup = 64;               ///< largest group sharing one tree walk [particles]
  P2pMode p2p = P2pMode::Plain;  ///< the near field: each target alone, or each pair once
  /// ρ: accepted cells at least (group radius)/ρ from their group's centre are expanded about
  /// it once per group (M2L, L2P; sim/common/local_expansion.h) instead of applied to each
  /// target; 0: none. At 0.08 on the H200 the walk takes 0.62–0.86 of its time, the force
  /// error within 2 % (Plummer 2^20 at Bonsai θ 0.4–0.75, the merger at the acceleration MAC);
  /// ρ is fixed whatever the MAC's accuracy, so at tighter forces the series' share grows (2^22:
  /// p99 +12 % at θ 0.4, median +8 % and p99 +26 % at θ 0.35) (docs/BENCHMARKS.md, "The far
  /// cells expanded about their group") [1]
  float expansionRatio = 0.08f;
  /// The far cells' expansion by mass: also a cell nearer than R/ρ (down to R/0.3) whose
  /// series' error bound M R³/d⁵ is at most this budget times the MAC's tolerance times the
  /// group's smallest |a_old| (sim/common/local_expansion.h, expansionGamma); 0: by distance
  /// alone (and expansionRatio 0 expands nothing, by either rule). At 1 the force error stays
  /// within ~1 % of the distance rule's alone; at 2 the median grows 3–4 % (the p99 0–5 %) and
  /// the step is the fastest at equal error (H200, 2^20 Plummer with the Bonsai test at θ 0.4 and
  /// 0.5, the merger with the acceleration MAC; 4 is slower there; docs/BENCHMARKS.md, "The far
  /// cells' expansion by their mass") [1]
  float expansionBudget = 2.0f;
  float softening = 0.05f;       ///< Plummer softening ε [length]
  Curve curve = Curve::Hilbert;  ///< space-filling curve for keys and particle order
  TimeStepping stepping = TimeStepping::Shared;
  float dtMax = 1.0f / 128.0f;  ///< the shared step, or the longest block step [time]
  float eta = 0.2f;             ///< block-step accuracy η in dt_i = η·sqrt(ε/|a_i|) [1]
  int maxBinDepth = 8;          ///< deepest block bin: dt ≥ dtMax / 2^maxBinDepth [1]
  /// Tree rebuilds (bbox, keys, sort, topology). Between rebuilds a force evaluation refits the
  /// last tree: its order and topology kept, its moments and tight boxes made from the current
  /// positions. kRebuildAuto: the interval is tuned while running (sim/rebuild_tuner.h);
  /// K ≥ 1: every K-th force evaluation rebuilds (1: every one).
  int rebuildInterval = 0;
};

/// The largest SimParams::expansionRatio, a bound on what the slider offers: the series converges
/// there (R/d ≤ 0.5), but its error passes the MAC's well before (Plummer θ 0.5: p99 ×5 at 0.2).
inline constexpr float kExpansionRatioMax = 0.5f;

/// The largest SimParams::expansionBudget (the slider's bound; the error grows fast past ~4).
inline constexpr float kExpansionBudgetMax = 16.0f;

/// SimParams::rebuildInterval: the interval tuned from the measured walk times.
inline constexpr int kRebuildAuto = 0;
/// The longest fixed interval [force evaluations].
inline constexpr int kMaxRebuildInterval = 1024;

inline bool operator==(const SimParams& a, const SimParams& b) {
  return a.mac == b.mac && a.theta == b.theta && a.macParam == b.macParam &&
         a.quadrupole == b.quadrupole && a.nLeaf == b.nLeaf && a.nGroup == b.nGroup &&
         a.p2p == b.p2p && a.expansionRatio == b.expansionRatio &&
         a.expansionBudget == b.expansionBudget && a.softening == b.softening &&
         a.curve == b.curve && a.stepping == b.stepping && a.dtMax == b.dtMax && a.eta == b.eta &&
         a.maxBinDepth == b.maxBinDepth && a.rebuildInterval == b.rebuildInterval;
}
inline bool operator!=(const SimParams& a, const SimParams& b) { return !(a == b); }

/// The defaults above, spelled out for callers that want them by name.
inline SimParams defaultSimParams() { return SimParams{}; }

/// The MAC parameter actually used: macParam, or the MAC's documented default when it is 0.
float effectiveMacParam(const SimParams& p);

/// The MAC as the moments and the walk apply it. The acceleration MAC needs |a_old|: without
/// old accelerations (the first evaluation) it falls back to the Barnes–Hut test with θ.
inline MacSetup macSetup(const SimParams& p, bool oldAccValid) {
  MacSetup m{static_cast<MacCode>(p.mac), p.theta, effectiveMacParam(p)};
  if (m.code == MacCode::Acceleration && !oldAccValid) m.code = MacCode::BarnesHut;
  return m;
}

/// The far cells' expansion as the walk of an evaluation applies it (sim/common/local_expansion.h):
/// ρ², and the mass rule's gamma for `mac` (macSetup's), which reads |a_old| and so is 0 without
/// old accelerations.
inline ExpansionRule expansionRule(const SimParams& p, const MacSetup& mac, bool oldAccValid) {
  return expansionRuleOf(p.expansionRatio,
                         oldAccValid ? expansionGamma(mac, p.expansionBudget) : 0.0f);
}

/// Whether an evaluation with `p` reads |a_old| (the acceleration MAC, the far cells' expansion
/// by mass): where a state's accelerations are not of these parameters, one evaluation first
/// provides them (measureAccuracy, bench_gpu).
inline bool readsOldAccelerations(const SimParams& p) {
  return p.mac == MacKind::Acceleration ||
         expansionRule(p, macSetup(p, true), true).gamma * p.expansionRatio > 0.0f;
}

/// A user-facing error: a value out of range or a name that is not known.
struct InvalidParameter : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// Throws InvalidParameter naming the parameter and the allowed range.
void validate(const SimParams& p);

// Names as the CLI, the JSON stats and the UI spell them.
std::string_view toString(MacKind k);
std::string_view toString(TimeStepping s);
std::string_view toString(Curve c);
std::string_view toString(P2pMode m);
std::optional<P2pMode> parseP2pMode(std::string_view name);
std::optional<MacKind> parseMacKind(std::string_view name);
std::optional<Curve> parseCurve(std::string_view name);
/// "auto", "every" or an interval in [1, kMaxRebuildInterval], as SimParams::rebuildInterval.
std::optional<int> parseRebuildInterval(std::string_view text);
/// "auto", "every" or the interval in digits.
std::string rebuildIntervalName(int interval);

inline constexpr float kThetaMax = 1.5f;
inline constexpr int kMaxBinDepthLimit = 20;
/// N_leaf and N_group: [1, kMaxLeafSize] and [1, kMaxGroupSize] particles.
inline constexpr int kMaxLeafSize = 1024;
inline constexpr int kMaxGroupSize = 1024;

}  // namespace bhviz::sim
