#include "app/core/output.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <stdexcept>

#ifndef BHVIZ_VERSION
#define BHVIZ_VERSION "unknown"
#endif

namespace bhviz::app {

namespace {

using Json = nlohmann::ordered_json;

// JSON numbers are doubles: a float parameter goes out as its shortest decimal (0.05, the
// value the user typed, rather than 0.05000000074505806).
double decimal(float f) {
  char buf[32];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf - 1, f);
  *r.ptr = '\0';
  return std::strtod(buf, nullptr);
}

Json paramsJson(const sim::SimParams& p) {
  // Field names as in SimParams, so a stats file maps back onto the struct one to one.
  return Json{
      {"mac", std::string(sim::toString(p.mac))},
      {"theta", decimal(p.theta)},
      {"macParam", decimal(p.macParam)},
      {"effectiveMacParam", decimal(sim::effectiveMacParam(p))},
      {"quadrupole", p.quadrupole},
      {"nLeaf", p.nLeaf},
      {"nGroup", p.nGroup},
      {"p2p", std::string(sim::toString(p.p2p))},
      {"expansionRatio", decimal(p.expansionRatio)},
      {"expansionBudget", decimal(p.expansionBudget)},
      {"softening", decimal(p.softening)},
      {"curve", std::string(sim::toString(p.curve))},
      {"stepping", std::string(sim::toString(p.stepping))},
      {"dtMax", decimal(p.dtMax)},
      {"eta", decimal(p.eta)},
      {"maxBinDepth", p.maxBinDepth},
      {"rebuildInterval", sim::rebuildIntervalName(p.rebuildInterval)},
  };
}

Json energyJson(const sim::Diagnostics& d) {
  return Json{{"kinetic", d.kinetic}, {"potential", d.potential}, {"total", d.total()}};
}

// A ratio that is null in the JSON (NaN dumps as null) rather than a division by zero.
double ratio(double num, double den) { return den != 0.0 ? num / den : std::nan(""); }

Json interactionsJson(const sim::InteractionCounts& c) {
  const double targets = static_cast<double>(c.targets);
  const double cell = static_cast<double>(c.cell), particle = static_cast<double>(c.particle);
  return Json{
      {"cell", c.cell},
      {"particle", c.particle},
      {"targets", c.targets},
      {"per_particle", ratio(cell + particle, targets)},
      {"cell_per_particle", ratio(cell, targets)},
      {"particle_per_particle", ratio(particle, targets)},
      {"expanded", c.expanded},  // of "cell": through the groups' expansions
  };
}

Json stagesJson(const sim::StepProfile& profile, double divisor) {
  Json j = Json::object();
  for (int s = 0; s < static_cast<int>(sim::Stage::Count); ++s) {
    j[std::string(sim::kStageNames[s])] = profile.ms[s] / divisor;
  }
  return j;
}

Json boxJson(const sim::Box& b) {
  return Json{{"lo", {b.lo.x, b.lo.y, b.lo.z}}, {"hi", {b.hi.x, b.hi.y, b.hi.z}}};
}

Json rankJson(int rank, const sim::RankReport& r) {
  return Json{
      {"rank", rank},
      {"particles", r.particles},
      {"stage_ms", stagesJson(r.total, 1.0)},
      {"total_ms", r.total.total()},
      {"work", r.work},
      {"decompositions", r.decompositions},
      {"particles_sent", r.particlesSent},
      {"orb_ms", r.orbMs},
      {"exchange_ms", r.exchangeMs},
      {"device_bytes_peak", r.deviceBytesPeak},
      {"domain", boxJson(r.domain)},
      {"let", Json{{"cells_sent", r.letCellsSent},
                   {"particles_sent", r.letParticlesSent},
                   {"bytes_sent", r.letBytesSent},
                   {"cells_received", r.letCellsReceived},
                   {"particles_received", r.letParticlesReceived},
                   {"bytes_received", r.letBytesReceived}}},
  };
}

/// The tree statistics: the histograms cut at their last level, N_leaf + 1 and last busy bin.
Json treeJson(const sim::TreeStatistics& t) {
  const auto upTo = [](const auto& a, std::size_t n) {
    return std::vector<std::uint64_t>(a.begin(), a.begin() + std::min(n, a.size()));
  };
  std::size_t bins = 0;
  for (std::size_t b = 0; b < t.interactionsLog2.size(); ++b) {
    if (t.interactionsLog2[b] > 0) bins = b + 1;
  }
  return Json{
      {"particles", t.particles},
      {"cells", t.cells},
      {"leaves", t.leaves},
      {"groups", t.groups},
      {"levels", t.levels},
      {"leaf_size", t.leafSize},
      {"cells_per_level", upTo(t.cellsPerLevel, std::size_t(t.levels))},
      {"leaves_per_level", upTo(t.leavesPerLevel, std::size_t(t.levels))},
      {"leaves_by_occupancy", upTo(t.leavesByOccupancy, std::size_t(t.leafSize) + 2)},
      {"overfull_particles", t.overfullParticles},
      {"targets", t.targets},
      {"interactions", t.interactions},
      {"interactions_min", t.minInteractions},
      {"interactions_max", t.maxInteractions},
      {"interactions_mean", t.meanInteractions()},
      {"interactions_log2", upTo(t.interactionsLog2, bins)},
  };
}

/// The tree's rebuilds: how many, the policy, and the tuner's last fit and choice (an interval
/// or a time that is infinite, no aging seen, is null).
Json rebuildJson(const sim::SimParams& p, const sim::RebuildTunerState& r) {
  const auto finite = [](double v) { return std::isfinite(v) ? v : std::nan(""); };
  const double evaluations = static_cast<double>(r.recorded());
  return Json{
      {"policy", sim::rebuildIntervalName(p.rebuildInterval)},
      {"rebuilds", r.rebuilds},
      {"refits", r.refits},
      {"around_targets", r.aroundTargets},
      {"around_targets_ms", r.aroundMs},
      {"last", std::string(sim::toString(r.last))},
      {"mean_interval", ratio(evaluations, static_cast<double>(r.rebuilds))},
      {"evaluations_since_rebuild", r.evaluations},
      {"age", r.age},
      {"rebuild_ms", r.rebuildMs},
      {"targets_per_time", r.targetsPerTime},
      {"best_interval", finite(r.bestInterval)},
      {"probe_after", r.probeAfter},
      {"probes_by_sample", r.sampledProbes},
      {"fit", Json{{"model", std::string(sim::toString(r.fit.model))},
                   {"samples", r.samples},
                   {"b", r.fit.b},
                   {"c", r.fit.c},
                   {"reduced_chi2", finite(r.fit.reducedChi2)}}},
      {"predicted_walk_ms", r.predictedWalkMs},
      {"measured_walk_ms", r.measuredWalkMs},
  };
}

/// max / mean of the ranks' work (interactions): 1 when perfectly balanced.
double imbalance(const std::vector<sim::RankReport>& ranks) {
  double max = 0.0, sum = 0.0;
  for (const sim::RankReport& r : ranks) {
    max = std::max(max, static_cast<double>(r.work));
    sum += static_cast<double>(r.work);
  }
  return ratio(max * static_cast<double>(ranks.size()), sum);
}

}  // namespace

// Keys: bhviz_version, scenario, n, seed, backend, threads, params{…}, steps, substeps, time,
// stage_ms{stage: ms}, stage_ms_per_substep{…}, total_ms (sum of the stages), wall_ms,
// interactions{…}, energy{start, end}, energy_drift, momentum{start, end},
// angular_momentum{start, end}, bin_histogram (at the end), tree{…} (the last evaluation's
// statistics, when there was one: cells_per_level, leaves_by_occupancy [0..N_leaf + 1],
// interactions_log2 [bin b: 2^b..2^(b+1) − 1], …), rebuild{policy, rebuilds, refits,
// around_targets, around_targets_ms, last, mean_interval, best_interval, fit{model, …},
// predicted_walk_ms, measured_walk_ms, …}, aborted (+
// abort_reason, nonfinite_ids when it is true); under mpirun also ranks[{rank, particles, stage_ms,
// total_ms, work, decompositions, particles_sent, domain, let{…}}] and imbalance (max / mean work).
Json statsJson(const RunReport& r) {
  const double substeps = static_cast<double>(r.substeps);
  Json j;
  j["bhviz_version"] = BHVIZ_VERSION;
  j["scenario"] = r.scenario;
  j["n"] = r.n;
  j["seed"] = r.seed;
  j["backend"] = r.backend;
  j["threads"] = r.threads;
  j["params"] = paramsJson(r.params);
  j["steps"] = r.steps;
  j["substeps"] = r.substeps;
  j["time"] = r.time;
  j["stage_ms"] = stagesJson(r.profile, 1.0);
  j["stage_ms_per_substep"] = stagesJson(r.profile, substeps > 0.0 ? substeps : std::nan(""));
  j["total_ms"] = r.profile.total();
  j["wall_ms"] = r.wallMs;
  j["interactions"] = interactionsJson(r.profile.interactions);
  j["energy"] = Json{{"start", energyJson(r.start)}, {"end", energyJson(r.end)}};
  j["energy_drift"] = ratio(r.end.total() - r.start.total(), std::abs(r.start.total()));
  j["momentum"] = Json{{"start", r.start.momentum}, {"end", r.end.momentum}};
  j["angular_momentum"] = Json{{"start", r.start.angularMomentum}, {"end", r.end.angularMomentum}};
  j["bin_histogram"] = r.end.binHistogram;
  if (r.tree.cells > 0) j["tree"] = treeJson(r.tree);
  j["rebuild"] = rebuildJson(r.params, r.rebuild);
  j["aborted"] = r.aborted;
  if (r.aborted) {
    j["abort_reason"] = r.abortReason;
    j["nonfinite_ids"] = r.nonFiniteIds;
  }
  if (!r.ranks.empty()) {
    Json ranks = Json::array();
    for (std::size_t k = 0; k < r.ranks.size(); ++k) {
      ranks.push_back(rankJson(static_cast<int>(k), r.ranks[k]));
    }
    j["ranks"] = ranks;
    j["imbalance"] = imbalance(r.ranks);
  }
  return j;
}

std::filesystem::path temporaryPathFor(const std::filesystem::path& path) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  return tmp;
}

void writeFileAtomically(const std::filesystem::path& path,
                         const std::function<void(std::ostream&)>& write) {
  const std::filesystem::path tmp = temporaryPathFor(path);
  std::error_code ec;
  try {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot open '" + tmp.string() + "' for writing");
    write(f);
    f.close();
    if (!f) throw std::runtime_error("writing '" + tmp.string() + "' failed");
  } catch (...) {
    std::filesystem::remove(tmp, ec);
    throw;
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error("cannot rename '" + tmp.string() + "' to '" + path.string() +
                             "': " + ec.message());
  }
}

void writeStats(const std::filesystem::path& path, const RunReport& r) {
  writeFileAtomically(path, [&](std::ostream& out) { out << statsJson(r).dump(2) << '\n'; });
}

void writeAccelCsv(std::ostream& out, const sim::Particles& p) {
  // Backends keep particles in key order; sorting by id makes files from different runs,
  // backends and thread counts comparable line by line.
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return p.id[a] < p.id[b]; });

  out << "id,mass,x,y,z,vx,vy,vz,ax,ay,az,pot\n";
  char line[320];
  for (std::size_t i : order) {
    const sim::Vec4& x = p.posMass[i];
    const sim::Vec4& v = p.vel[i];
    const sim::Vec4& a = p.accPot[i];
    // %.9g: nine significant digits round-trip every float exactly.
    const int len = std::snprintf(
        line, sizeof line, "%u,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n",
        static_cast<unsigned>(p.id[i]), double(x.w), double(x.x), double(x.y), double(x.z),
        double(v.x), double(v.y), double(v.z), double(a.x), double(a.y), double(a.z), double(a.w));
    out.write(line, std::min<int>(len, static_cast<int>(sizeof line) - 1));
  }
}

void writeAccelCsv(const std::filesystem::path& path, const sim::Particles& p) {
  writeFileAtomically(path, [&](std::ostream& out) { writeAccelCsv(out, p); });
}

}  // namespace bhviz::app
