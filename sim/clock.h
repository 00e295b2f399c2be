#pragma once
// The integer clock of the block time steps (common/timestep.h). Shared steps are the special
// case depth = 0: one bin, one tick per step.

#include <cstdint>

#include "sim/common/timestep.h"

namespace bhviz::sim {

struct Clock {
  double origin = 0.0;     ///< simulation time at tick 0 [time]
  std::uint64_t tick = 0;  ///< ticks since origin
  int depth = 0;           ///< deepest bin
  double dtMax = 0.0;      ///< step of bin 0 [time]

  double tickDt() const { return dtMax / static_cast<double>(std::uint64_t{1} << depth); }
  double time() const { return origin + static_cast<double>(tick) * tickDt(); }
  /// Every particle has just finished a step: velocities and forces are all at time().
  bool synchronized() const { return isActive(0, tick, depth); }
  /// The step of bin b [time].
  float binDt(int bin) const {
    return static_cast<float>(static_cast<double>(binPeriod(bin, depth)) * tickDt());
  }
};

}  // namespace bhviz::sim
