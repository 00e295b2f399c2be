// bench_block_steps' comparison of block and shared steps at equal p99 (block_steps_ratio.h).
#include "bench/block_steps_ratio.h"

#include <algorithm>
#include <cmath>

#include "bench/appendf.h"

namespace bhviz::bench {

std::vector<EqualP99> atEqualP99(const std::vector<RunCost>& shared,
                                 const std::vector<RunCost>& block) {
  std::vector<RunCost> s;
  for (const RunCost& r : shared) {
    if (r.p99 > 0.0 && r.seconds > 0.0 && r.evaluations > 0.0) s.push_back(r);
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
    if (!(b.p99 > 0.0)) continue;
    // The pair (i, i + 1) with p99s s[i] > b.p99 >= s[i + 1], or the nearest at either end.
    std::size_t i = 0;
    while (i + 2 < s.size() && b.p99 < s[i + 1].p99) ++i;
    const RunCost& coarse = s[i];
    const RunCost& fine = s[i + 1];
    const double f = std::log(b.p99 / coarse.p99) / std::log(fine.p99 / coarse.p99);
    const auto at = [f](double x0, double x1) { return x0 * std::pow(x1 / x0, f); };
    out.push_back({b, at(coarse.evaluations, fine.evaluations), at(coarse.seconds, fine.seconds),
                   b.p99 > s.front().p99 || b.p99 < s.back().p99});
  }
  return out;
}

std::string equalP99Table(const std::vector<EqualP99>& rows) {
  if (rows.empty()) return {};
  std::string out =
      "\nBlock against shared steps at equal p99 (the evaluations and wall time of the shared "
      "runs of the same rebuild mode, taken as powers of the p99 between the two that bracket "
      "it; * outside their range, extrapolated):\n\n"
      "| block run | Δx p99 / r_h | force evaluations / N | wall s | shared at that p99: "
      "evaluations / N | wall s | work ratio | time ratio |\n"
      "|---|---|---|---|---|---|---|---|\n";
  for (const EqualP99& r : rows) {
    appendf(out, "| %s | %.2e%s | %.1f | %.3f | %.1f | %.3f | %.2f | %.2f× |\n",
            r.block.label.c_str(), r.block.p99, r.extrapolated ? "*" : "", r.block.evaluations,
            r.block.seconds, r.sharedEvaluations, r.sharedSeconds,
            r.sharedEvaluations / r.block.evaluations, r.sharedSeconds / r.block.seconds);
  }
  return out;
}

}  // namespace bhviz::bench
