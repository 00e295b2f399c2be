#pragma once
// Where bench_block_steps' position errors sit: the length scale they are measured in, shells of
// initial radius, and each run's errors by final time bin with its worst 1 %'s place.

#include <string>
#include <utility>
#include <vector>

#include "sim/particles.h"

namespace bhviz::bench {

/// Radius about the mass-weighted centre that encloses half the mass [length].
double halfMassRadius(const sim::Particles& p);

/// Which of `shells` shells of equal count, by initial radius about the mass-weighted centre
/// (0: the innermost), each particle id is in; and each shell's outer radius [length].
struct Shells {
  std::vector<int> ofId;
  std::vector<double> outer;
};

/// The shells of `p` (ids 0..N-1); none for shells <= 0.
Shells shellsByRadius(const sim::Particles& p, int shells);

/// The median position error per shell: `dx` is sim::positionErrors of `run` (sorted by id, ids
/// 0..N-1) against its reference.
std::vector<double> shellMedians(const sim::Particles& run, const std::vector<double>& dx,
                                 const Shells& shells);

/// Markdown: each run's (label, shellMedians) as a row under the shells' outer radii / `scale`.
std::string shellMediansTable(
    const Shells& shells, double scale,
    const std::vector<std::pair<std::string, std::vector<double>>>& medians);

/// Markdown for one run (`run` sorted by id, ids 0..N-1; `dx` its sim::positionErrors against
/// the reference, in units of `scale`, which the shells' radii are printed in too): per
/// final time bin (step dtMax / 2^bin) its particles, their median and 99th-percentile Δx, and
/// its share of the run's worst 1 % (the ⌈N/100⌉ largest Δx, ties by id); then the worst 1 %'s
/// share of each shell, if `shells` has any. The final bin is where a particle ended: it may
/// have spent the run in others.
std::string errorsByBin(const std::string& label, const sim::Particles& run,
                        const std::vector<double>& dx, const Shells& shells, double scale,
                        double dtMax);

}  // namespace bhviz::bench
