// Where bench_block_steps' position errors sit (block_steps_errors.h).
#include "bench/block_steps_errors.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <utility>

#include "bench/appendf.h"
#include "sim/direct_sum.h"

namespace bhviz::bench {

using namespace bhviz::sim;

namespace {

/// Each particle's distance from the mass-weighted centre of all [length], in the order of p.
std::vector<double> radiiAboutCentre(const Particles& p) {
  double m = 0.0, cx = 0.0, cy = 0.0, cz = 0.0;
  for (const Vec4& q : p.posMass) {
    m += q.w;
    cx += double(q.w) * q.x;
    cy += double(q.w) * q.y;
    cz += double(q.w) * q.z;
  }
  cx /= m, cy /= m, cz /= m;
  std::vector<double> r(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Vec4& q = p.posMass[i];
    r[i] = std::hypot(q.x - cx, q.y - cy, q.z - cz);
  }
  return r;
}

}  // namespace

double halfMassRadius(const Particles& p) {
  const std::vector<double> r = radiiAboutCentre(p);
  std::vector<std::pair<double, double>> radiusMass(p.size());  // [length], [mass]
  double m = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    radiusMass[i] = {r[i], p.posMass[i].w};
    m += p.posMass[i].w;
  }
  std::sort(radiusMass.begin(), radiusMass.end());
  double enclosed = 0.0;
  for (const auto& [radius, mass] : radiusMass) {
    enclosed += mass;
    if (enclosed >= 0.5 * m) return radius;
  }
  return radiusMass.empty() ? 0.0 : radiusMass.back().first;
}

Shells shellsByRadius(const Particles& p, int shells) {
  Shells out;
  if (shells <= 0 || p.size() == 0) return out;
  const std::vector<double> r = radiiAboutCentre(p);
  std::vector<std::uint32_t> byRadius(p.size());  // indices, innermost first
  std::iota(byRadius.begin(), byRadius.end(), 0u);
  std::sort(byRadius.begin(), byRadius.end(),
            [&](std::uint32_t a, std::uint32_t b) { return r[a] < r[b]; });
  out.ofId.assign(p.size(), 0);
  out.outer.assign(static_cast<std::size_t>(shells), 0.0);
  for (std::size_t k = 0; k < byRadius.size(); ++k) {
    const auto shell =
        static_cast<std::size_t>(k * static_cast<std::size_t>(shells) / byRadius.size());
    out.ofId[p.id[byRadius[k]]] = static_cast<int>(shell);
    out.outer[shell] = r[byRadius[k]];
  }
  return out;
}

std::vector<double> shellMedians(const Particles& run, const std::vector<double>& dx,
                                 const Shells& shells) {
  std::vector<std::vector<double>> byShell(shells.outer.size());
  for (std::size_t i = 0; i < run.size(); ++i) {
    byShell[static_cast<std::size_t>(shells.ofId[run.id[i]])].push_back(dx[i]);
  }
  std::vector<double> medians;
  for (std::vector<double>& d : byShell) medians.push_back(summarizeErrors(std::move(d)).median);
  return medians;
}

std::string shellMediansTable(
    const Shells& shells, double scale,
    const std::vector<std::pair<std::string, std::vector<double>>>& medians) {
  std::string out =
      "\nmedian Δx / r_h by shell of initial radius (equal counts; outer radius / r_h):\n\n| run |";
  for (double r : shells.outer) appendf(out, " ≤ %.3g |", r / scale);
  out += "\n|---|";
  for (std::size_t k = 0; k < shells.outer.size(); ++k) out += "---|";
  out += "\n";
  for (const auto& [label, row] : medians) {
    appendf(out, "| %s |", label.c_str());
    for (double m : row) appendf(out, " %.2e |", m);
    out += "\n";
  }
  return out;
}

std::string errorsByBin(const std::string& label, const Particles& run,
                        const std::vector<double>& dx, const Shells& shells, double scale,
                        double dtMax) {
  // The worst 1 %: the ⌈N/100⌉ largest errors, ties by id (run is sorted by id), so that a p99
  // on a run of equal values (0, where a run meets the reference) cannot take in most of N.
  std::vector<std::uint32_t> order(run.size());
  std::iota(order.begin(), order.end(), 0u);
  const std::size_t worst = std::min(order.size(), (order.size() + 99) / 100);
  std::partial_sort(
      order.begin(), order.begin() + static_cast<std::ptrdiff_t>(worst), order.end(),
      [&](std::uint32_t a, std::uint32_t b) { return dx[a] > dx[b] || (dx[a] == dx[b] && a < b); });
  std::vector<bool> isWorst(run.size(), false);
  for (std::size_t k = 0; k < worst; ++k) isWorst[order[k]] = true;

  int deepest = 0;
  for (std::uint8_t b : run.bin) deepest = std::max(deepest, int(b));
  std::vector<std::vector<double>> byBin(static_cast<std::size_t>(deepest) + 1);
  std::vector<std::size_t> worstByBin(byBin.size(), 0);
  std::vector<std::size_t> worstByShell(shells.outer.size(), 0);
  for (std::size_t i = 0; i < run.size(); ++i) {
    byBin[run.bin[i]].push_back(dx[i]);
    if (!isWorst[i]) continue;
    ++worstByBin[run.bin[i]];
    if (!shells.outer.empty()) ++worstByShell[static_cast<std::size_t>(shells.ofId[run.id[i]])];
  }
  const double share = 100.0 / double(std::max<std::size_t>(worst, 1));
  std::string out;
  appendf(out,
          "\n%s: by final bin (step dtMax / 2^bin), Δx / r_h; the worst 1 %% = %zu particles "
          "(Δx ≥ %.2e)\n\n",
          label.c_str(), worst, worst > 0 ? dx[order[worst - 1]] : 0.0);
  out += "| bin | step | particles | median Δx | p99 Δx | of the worst 1 % |\n";
  out += "|---|---|---|---|---|---|\n";
  for (std::size_t b = 0; b < byBin.size(); ++b) {
    if (byBin[b].empty()) continue;
    const std::size_t count = byBin[b].size();
    const ErrorSummary e = summarizeErrors(std::move(byBin[b]));
    appendf(out, "| %zu | %.4g | %zu | %.2e | %.2e | %.1f %% |\n", b,
            dtMax / std::ldexp(1.0, int(b)), count, e.median, e.p99, share * double(worstByBin[b]));
  }
  if (shells.outer.empty()) return out;
  out += "\nthe worst 1 % by shell of initial radius (outer radius / r_h):";
  for (std::size_t k = 0; k < shells.outer.size(); ++k) {
    appendf(out, " ≤ %.3g: %.1f %%;", shells.outer[k] / scale, share * double(worstByShell[k]));
  }
  out += "\n";
  return out;
}

}  // namespace bhviz::bench
