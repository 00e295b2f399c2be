#include "sim/params.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "sim/backend.h"

namespace bhviz::sim {

float effectiveMacParam(const SimParams& p) {
  if (p.macParam > 0.0f) return p.macParam;
  switch (p.mac) {
    case MacKind::Multipole:
      return 1e-4f;  // absolute acceleration error bound per cell
    case MacKind::Acceleration:
      return 2e-3f;  // relative: GADGET's ErrTolForceAcc range
    default:
      return 0.0f;  // θ-based MACs take no extra parameter
  }
}

namespace {
template <typename T>
void require(bool ok, const char* name, T value, const char* range) {
  if (ok) return;
  std::ostringstream s;
  s << name << " = " << value << " is out of range: must be " << range;
  throw InvalidParameter(s.str());
}
}  // namespace

void validate(const SimParams& p) {
  require(p.theta > 0.0f && p.theta <= kThetaMax, "theta", p.theta, "in (0, 1.5]");
  require(p.macParam >= 0.0f && std::isfinite(p.macParam), "mac-param", p.macParam,
          "> 0 (or 0 for the MAC's default)");
  const std::string leafRange = "in [1, " + std::to_string(kMaxLeafSize) + "]";
  const std::string groupRange = "in [1, " + std::to_string(kMaxGroupSize) + "]";
  char expansionRange[48];
  std::snprintf(expansionRange, sizeof expansionRange, "in [0, %g] (0: no expansion)",
                double(kExpansionRatioMax));
  require(p.nLeaf >= 1 && p.nLeaf <= kMaxLeafSize, "n-leaf", p.nLeaf, leafRange.c_str());
  require(p.nGroup >= 1 && p.nGroup <= kMaxGroupSize, "n-group", p.nGroup, groupRange.c_str());
  require(p.expansionRatio >= 0.0f && p.expansionRatio <= kExpansionRatioMax, "expansion-ratio",
          p.expansionRatio, expansionRange);
  char budgetRange[48];
  std::snprintf(budgetRange, sizeof budgetRange, "in [0, %g] (0: by distance alone)",
                double(kExpansionBudgetMax));
  require(p.expansionBudget >= 0.0f && p.expansionBudget <= kExpansionBudgetMax, "expansion-budget",
          p.expansionBudget, budgetRange);
  require(p.softening >= 0.0f && std::isfinite(p.softening), "softening", p.softening,
          ">= 0 and finite");
  require(p.dtMax > 0.0f && std::isfinite(p.dtMax), "dt", p.dtMax, "> 0 and finite");
  require(p.eta > 0.0f && std::isfinite(p.eta), "eta", p.eta, "> 0 and finite");
  require(p.maxBinDepth >= 0 && p.maxBinDepth <= kMaxBinDepthLimit, "max-bin-depth", p.maxBinDepth,
          "in [0, 20]");
  const std::string rebuildRange =
      "auto (0), every (1) or an interval in [1, " + std::to_string(kMaxRebuildInterval) + "]";
  require(p.rebuildInterval >= 0 && p.rebuildInterval <= kMaxRebuildInterval, "rebuild",
          p.rebuildInterval, rebuildRange.c_str());
  require(!(p.stepping == TimeStepping::Block && p.softening <= 0.0f), "softening", p.softening,
          "> 0 with block steps (dt_i = eta*sqrt(eps/|a|))");
}

void validate(const SimParams& p, const BackendLimits& limits, std::string_view backendName) {
  validate(p);
  const std::string on = " on the " + std::string(backendName) + " backend";
  const std::string leafRange = "in [1, " + std::to_string(limits.maxLeafSize) + "]" + on;
  const std::string groupRange = "in [1, " + std::to_string(limits.maxGroupSize) + "]" + on;
  require(p.nLeaf <= limits.maxLeafSize, "n-leaf", p.nLeaf, leafRange.c_str());
  require(p.nGroup <= limits.maxGroupSize, "n-group", p.nGroup, groupRange.c_str());
  const std::string p2pRange = "plain" + on + " (it has no mutual near field)";
  require(limits.mutualP2p || p.p2p == P2pMode::Plain, "p2p", toString(p.p2p), p2pRange.c_str());
}

std::string_view toString(MacKind k) {
  switch (k) {
    case MacKind::BarnesHut:
      return "bh";
    case MacKind::Bonsai:
      return "bonsai";
    case MacKind::Multipole:
      return "multipole";
    case MacKind::Acceleration:
      return "acceleration";
  }
  return "?";
}

std::string_view toString(TimeStepping s) { return s == TimeStepping::Shared ? "shared" : "block"; }

std::string_view toString(Curve c) { return c == Curve::Hilbert ? "hilbert" : "morton"; }

std::string_view toString(P2pMode m) { return m == P2pMode::Plain ? "plain" : "mutual"; }

std::optional<P2pMode> parseP2pMode(std::string_view name) {
  if (name == "plain") return P2pMode::Plain;
  if (name == "mutual") return P2pMode::Mutual;
  return std::nullopt;
}

std::optional<MacKind> parseMacKind(std::string_view name) {
  for (MacKind k :
       {MacKind::BarnesHut, MacKind::Bonsai, MacKind::Multipole, MacKind::Acceleration}) {
    if (name == toString(k)) return k;
  }
  return std::nullopt;
}

std::optional<Curve> parseCurve(std::string_view name) {
  if (name == "hilbert") return Curve::Hilbert;
  if (name == "morton") return Curve::Morton;
  return std::nullopt;
}

std::optional<int> parseRebuildInterval(std::string_view text) {
  if (text == "auto") return kRebuildAuto;
  if (text == "every") return 1;
  if (text.empty() || text.size() > 4) return std::nullopt;
  int k = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    k = 10 * k + (c - '0');
  }
  if (k < 1 || k > kMaxRebuildInterval) return std::nullopt;
  return k;
}

std::string rebuildIntervalName(int interval) {
  if (interval == kRebuildAuto) return "auto";
  if (interval == 1) return "every";
  return std::to_string(interval);
}

}  // namespace bhviz::sim
