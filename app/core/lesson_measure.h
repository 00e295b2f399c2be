#pragma once
// The measured answers to the lessons' questions (app/core/lesson.h), on the running
// simulation's state, with whatever backend runs it: the force error and cost at several
// parameter values (against exact direct summation on a sample, on a scratch backend of the
// same kind), the stars per time bin and the work block steps save, the share of disk stars
// pulled out of their galaxy.

#include <string>
#include <vector>

#include "app/core/lesson.h"
#include "sim/simulation.h"

namespace bhviz::app {

struct LessonAnswer {
  std::vector<std::string> lines;  ///< one measured fact a line; a comparison last
  double spread = -1.0;            ///< Spread: the share measured [0, 1]; -1 otherwise
};

/// Measures `m` on `sim`'s current state. For Spread, `spreadBefore` (≥ 0) is the share at the
/// step's start, compared with now; -1 for none.
LessonAnswer measureLesson(const sim::Simulation& sim, const LessonMeasure& m,
                           double spreadBefore = -1.0);

/// The share of disk stars farther than `radius` from their own galaxy's densest centre
/// (app/core/galaxy_centre.h); -1 when there are no disk stars.
double diskSpread(const sim::Particles& p, double radius);

}  // namespace bhviz::app
