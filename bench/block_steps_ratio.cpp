// bench_block_steps' comparison of block and shared steps at equal p99 (block_steps_ratio.h).
#include "bench/block_steps_ratio.h"

#include <algorithm>
#include <cmath>

#include "bench/appendf.h"

namespace bhviz::bench {

namespace {

bool usable(double x) { return std::isfinite(x) && x > 0.0; }

bool usable(const RunCost& r) {
  return usable(r.p99) && usable(r.seconds) && usable(r.evaluations);
}

}  // namespace

std::vector<EqualP99> atEqualP99(const std::vector<RunCost>& shared,
                                 const std::vector<RunCost>& block) {
  std::vector<RunCost> s;
  for (const RunCost& r : shared) {
    if (usable(r)) s.push_back(r);
  }
  // Coarsest first; stable, so that of equal p99s the first given stays.
  std::stable_sort(s.begin(), s.end(),
                   [](const RunCost& a, const RunCost& b) { return a.p99 > b.p99; });
  s.erase(std::unique(s.begin(), s.end(),
                      [](const RunCost& a, const RunCost& b) { return a.p99 == b.p99; }),
          s.end());
  std::vector<EqualP99> out;
  if (s.size() < 2) return out;
  for (const RunCost& b : block) {
    if (!usable(b)) continue;
    // The pair (i, i + 1) with p99s s[i] >= b.p99 >= s[i + 1], or the nearest at either end.
    std::size_t i = 0;
    while (i + 2 < s.size() && b.p99 < s[i + 1].p99) ++i;
    const RunCost& coarse = s[i];
    const RunCost& fine = s[i + 1];
    const double f = std::log(b.p99 / coarse.p99) / std::log(fine.p99 / coarse.p99);
    const auto at = [f](double x0, double x1) { return x0 * std::pow(x1 / x0, f); };
    out.push_back({b, at(coarse.evaluations, fine.evaluations), at(coarse.seconds, fine.seconds),
                   b.p99 > s.front().p99 || b.p99 < s.back().p99,
                   f < -1.0 - 1e-9 || f > 2.0 + 1e-9});  // one width out, give or take rounding
  }
  return out;
}

void EqualP99ByMode::add(const std::string& mode, bool shared, const RunCost& run) {
  auto it =
      std::find_if(m_modes.begin(), m_modes.end(), [&](const Mode& m) { return m.name == mode; });
  if (it == m_modes.end()) it = m_modes.insert(m_modes.end(), Mode{mode, {}, {}});
  (shared ? it->shared : it->block).push_back(run);
}

std::vector<EqualP99> EqualP99ByMode::rows() const {
  std::vector<EqualP99> out;
  for (const Mode& m : m_modes) {
    for (const EqualP99& e : atEqualP99(m.shared, m.block)) out.push_back(e);
  }
  return out;
}

std::string equalP99Table(const std::vector<EqualP99>& rows) {
  if (rows.empty()) return {};
  std::string out =
      "\nBlock against shared steps at equal p99 (the evaluations and wall time of the shared "
      "runs of the same rebuild mode, taken as powers of the p99 between the two runs whose "
      "p99s bracket the block run's; * outside their range, extrapolated; — more than that "
      "pair's width out):\n\n"
      "| block run | Δx p99 / r_h | force evaluations / N | wall s | shared at that p99: "
      "evaluations / N | wall s | work ratio | time ratio |\n"
      "|---|---|---|---|---|---|---|---|\n";
  for (const EqualP99& r : rows) {
    appendf(out, "| %s | %.2e%s | %.1f | %.3f |", r.block.label.c_str(), r.block.p99,
            r.extrapolated ? "*" : "", r.block.evaluations, r.block.seconds);
    if (r.tooFar) {
      out += " — | — | — | — |\n";
      continue;
    }
    appendf(out, " %.1f | %.3f | %.2f× | %.2f× |\n", r.sharedEvaluations, r.sharedSeconds,
            r.sharedEvaluations / r.block.evaluations, r.sharedSeconds / r.block.seconds);
  }
  return out;
}

}  // namespace bhviz::bench
