#pragma once
// bench_block_steps' comparison of block and shared steps at equal accuracy: each block run
// against the shared runs taken to its 99th-percentile position error.

#include <string>
#include <vector>

namespace bhviz::bench {

/// One run as the comparison sees it.
struct RunCost {
  std::string label;
  double evaluations = 0.0;  ///< force evaluations per particle [1]
  double seconds = 0.0;      ///< wall time [s]
  double p99 = 0.0;          ///< 99th-percentile position error (bench_block_steps: / r_h)
};

/// A block run and what the shared runs would cost at its p99.
struct EqualP99 {
  RunCost block;
  double sharedEvaluations = 0.0;  ///< force evaluations per particle [1]
  double sharedSeconds = 0.0;      ///< wall time [s]
  bool extrapolated = false;       ///< the block run's p99 lies outside the shared runs' range
  /// Extrapolated further than the width of the pair it extends (in log p99): not worth printing.
  bool tooFar = false;
};

/// For each block run, the shared runs' evaluations and wall time at its p99, each taken as a
/// power of the p99 between the two shared runs whose p99s bracket it (linear in log–log), or,
/// outside their range, between the two nearest (extrapolated: the farther out, and the closer
/// those two runs' p99s, the less it is worth). Needs two shared runs of distinct finite positive
/// p99s, times and evaluations (else none); of shared runs with the same p99 the first counts;
/// block runs without a finite positive p99, time and evaluations are left out.
std::vector<EqualP99> atEqualP99(const std::vector<RunCost>& shared,
                                 const std::vector<RunCost>& block);

/// The runs of a sweep by rebuild mode, in the order the modes first come: each block run is
/// compared with the shared runs of its own mode.
class EqualP99ByMode {
 public:
  void add(const std::string& mode, bool shared, const RunCost& run);
  /// atEqualP99 of each mode in turn.
  std::vector<EqualP99> rows() const;

 private:
  struct Mode {
    std::string name;
    std::vector<RunCost> shared, block;
  };
  std::vector<Mode> m_modes;
};

/// Markdown: each comparison with its work ratio (shared evaluations over the block run's) and
/// time ratio (shared seconds over the block run's); extrapolated ones marked *, those too far out
/// without shared costs or ratios (—). Empty for none.
std::string equalP99Table(const std::vector<EqualP99>& rows);

}  // namespace bhviz::bench
