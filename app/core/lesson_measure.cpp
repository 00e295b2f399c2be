#include "app/core/lesson_measure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

#include "app/core/galaxy_centre.h"
#include "app/core/sweep.h"
#include "sim/accuracy.h"

namespace bhviz::app {

namespace {

constexpr int kTimings = 3;                  // the fastest of this many evaluations
constexpr std::size_t kBinSample = 200'000;  // stars looked at for the bins

std::string format(const char* pattern, double a, double b = 0.0, double c = 0.0, double d = 0.0) {
  char line[256];
  std::snprintf(line, sizeof line, pattern, a, b, c, d);
  return line;
}

std::string paramName(const std::string& param) {
  return param == "n_group" ? "N_group" : param == "n_leaf" ? "N_leaf" : "theta";
}

sim::SimParams withValue(sim::SimParams p, const std::string& param, double v) {
  if (param == "theta") {
    p.theta = static_cast<float>(v);
  } else if (param == "n_group") {
    p.nGroup = static_cast<int>(v);
  } else {
    p.nLeaf = static_cast<int>(v);
  }
  return p;
}

std::string valueText(const std::string& param, double v) {
  return param == "theta" ? format("%.2f", v) : format("%.0f", v);
}

LessonAnswer compare(const sim::Simulation& sim, const LessonMeasure& m) {
  LessonAnswer a;
  const sim::Particles state = sim.particles();
  std::unique_ptr<sim::Backend> scratch = sim.backend().makeScratch(state.size());
  const sim::AccuracyReference ref =
      sim::makeReference(state, sim.params().softening, std::min(kSweepSample, state.size()), 1,
                         scratch->referenceSum());
  const sim::BackendLimits limits = sim.backend().traits().limits;
  struct Point {
    double value, median, ms;
  };
  std::vector<Point> points;
  for (double v : m.values) {
    const sim::SimParams p = withValue(sim.params(), m.param, v);
    const std::string name = paramName(m.param) + " = " + valueText(m.param, v);
    try {
      sim::validate(p);
      if (p.nLeaf > limits.maxLeafSize || p.nGroup > limits.maxGroupSize) {
        throw sim::InvalidParameter("beyond the " + std::string(sim.backend().name()) +
                                    " backend's limits");
      }
      sim::AccuracySample best;
      best.msPerForce = std::numeric_limits<double>::infinity();
      for (int k = 0; k < kTimings; ++k) {
        const sim::AccuracySample s = sim::measureAccuracy(*scratch, state, p, ref, false);
        if (s.msPerForce < best.msPerForce) best = s;
      }
      a.lines.push_back(name + format(": median error %.2e, p99 %.2e, %.2f ms a force evaluation, "
                                      "%.0f interactions a star",
                                      best.error.median, best.error.p99, best.msPerForce,
                                      best.interactionsPerParticle));
      points.push_back({v, best.error.median, best.msPerForce});
    } catch (const std::exception& e) {
      a.lines.push_back(name + ": not measured (" + e.what() + ")");
    }
  }
  if (points.size() >= 2 && points.front().median > 0.0 && points.front().ms > 0.0) {
    const Point& f = points.front();
    const Point& l = points.back();
    a.lines.push_back(
        "from " + paramName(m.param) + " " + valueText(m.param, f.value) + " to " +
        valueText(m.param, l.value) +
        format(": the median error x%.2f, the time x%.2f", l.median / f.median, l.ms / f.ms));
  }
  return a;
}

LessonAnswer bins(const sim::Simulation& sim) {
  LessonAnswer a;
  const sim::Backend& b = sim.backend();
  sim::Particles p;
  const std::size_t stride = std::max<std::size_t>(1, (b.size() + kBinSample - 1) / kBinSample);
  b.downloadSample(p, static_cast<std::uint32_t>(stride));
  if (p.size() == 0) return a;
  std::vector<double> count;
  for (std::uint8_t bin : p.bin) {
    if (bin >= count.size()) count.resize(bin + 1u, 0.0);
    count[bin] += 1.0;
  }
  const int deepest = static_cast<int>(count.size()) - 1;
  double block = 0.0;
  for (int k = 0; k <= deepest; ++k) {
    const double share = count[static_cast<std::size_t>(k)] / double(p.size());
    block += share * std::ldexp(1.0, k);
    if (count[static_cast<std::size_t>(k)] > 0.0) {
      a.lines.push_back(format("bin %.0f (dt = dtMax/%.0f): %.1f %% of the stars", k,
                               std::ldexp(1.0, k), 100.0 * share));
    }
  }
  if (sim.params().stepping == sim::TimeStepping::Shared) {
    a.lines.push_back("shared steps: every star takes the same step");
    return a;
  }
  const double shared = std::ldexp(1.0, deepest);  // every star at the deepest bin's step
  a.lines.push_back(
      format("block steps compute %.0f %% of the forces that a shared step of "
             "dtMax/%.0f would: %.1fx less work",
             100.0 * block / shared, shared, shared / block));
  return a;
}

}  // namespace

double diskSpread(const sim::Particles& p, double radius) {
  unsigned galaxies = 0;
  for (std::uint8_t t : p.tag) galaxies = std::max(galaxies, sim::tagGalaxy(t) + 1);
  std::size_t disk = 0, out = 0;
  for (unsigned g = 0; g < galaxies; ++g) {
    const std::optional<Point3> c = densestCentre(p, starsOfGalaxy(p, g));
    if (!c) continue;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (sim::tagGalaxy(p.tag[i]) != g || sim::tagComponent(p.tag[i]) != sim::Component::Disk)
        continue;
      const double dx = p.posMass[i].x - (*c)[0], dy = p.posMass[i].y - (*c)[1],
                   dz = p.posMass[i].z - (*c)[2];
      ++disk;
      out += dx * dx + dy * dy + dz * dz > radius * radius;
    }
  }
  return disk > 0 ? double(out) / double(disk) : -1.0;
}

LessonAnswer measureLesson(const sim::Simulation& sim, const LessonMeasure& m,
                           double spreadBefore) {
  switch (m.kind) {
    case LessonMeasure::Kind::None:
      return {};
    case LessonMeasure::Kind::Compare:
      return compare(sim, m);
    case LessonMeasure::Kind::Bins:
      return bins(sim);
    case LessonMeasure::Kind::Spread: {
      LessonAnswer a;
      a.spread = diskSpread(sim.particles(), m.radius);
      if (a.spread < 0.0) {
        a.lines.push_back("no disk stars in this scene");
        return a;
      }
      a.lines.push_back(
          format("t = %.2f: %.1f %% of the disk stars are farther than %.3g from "
                 "their galaxy's centre",
                 sim.time(), 100.0 * a.spread, m.radius));
      if (spreadBefore >= 0.0) {
        a.lines.push_back(format("at the step's start: %.1f %%; now %.1fx as many",
                                 100.0 * spreadBefore,
                                 spreadBefore > 0.0 ? a.spread / spreadBefore : 0.0));
      }
      return a;
    }
  }
  return {};
}

}  // namespace bhviz::app
