#pragma once
// A lesson without a window (`bhviz --headless --lesson NAME [--frames DIR]`): each step's scene
// is built or changed, its stretch of time run, its text, question and measured answer printed,
// and its picture drawn (DIR/frame_000000.png for the first step, and so on).

#include <iosfwd>

#include "app/core/options.h"

namespace bhviz::app {

/// Runs the lesson of `o` (o.lesson). Returns the exit status: 0, or 1 when a state became
/// non-finite. Throws BackendUnavailable, LessonError, and std::exception for the unexpected.
int runLesson(const Options& o, std::ostream& out, std::ostream& err);

}  // namespace bhviz::app
