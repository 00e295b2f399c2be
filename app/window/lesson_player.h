#pragma once
// The window's guided lessons (app/core/lesson.h): entering a step sets its scene, parameters,
// camera, colours and overlay, and shows its panel; the simulation then runs the step's stretch
// of time and pauses, and the step's question is answered by measuring the state
// (app/core/lesson_measure.h). The Lesson panel (panels_lesson.cpp) shows it and asks for the
// next step; the main loop calls update() once a frame.

#include <optional>
#include <string>

#include "app/core/lesson.h"
#include "app/core/lesson_measure.h"
#include "app/core/sim_session.h"
#include "app/window/app_state.h"

namespace bhviz::app {

class LessonPlayer {
 public:
  bool active() const { return m_lesson != nullptr; }
  const Lesson* lesson() const { return m_lesson; }
  int step() const { return m_step; }
  const LessonStep& current() const { return m_lesson->steps[static_cast<std::size_t>(m_step)]; }
  /// The answer to the current step's question; empty until measured.
  const LessonAnswer& answer() const { return m_answer; }
  bool measured() const { return m_measured; }
  /// The simulated time the current step runs to; < 0 when it runs nothing.
  double runUntil() const { return m_runUntil; }
  double runFrom() const { return m_runFrom; }

  /// Every step's N (the command line's --n), instead of the lesson's own.
  void overrideN(std::size_t n) { m_n = n; }
  /// Starts `lesson` at its first step.
  void start(const Lesson& lesson, AppState& s, FrameRequests& r);
  /// Enters step k (0-based): its scene (a rebuild) and its settings, cumulated over steps
  /// 0..k on top of the parameters the lesson started from, so that Back gives the same step.
  void enter(int k, AppState& s, FrameRequests& r);
  /// Once a frame: starts the step's run on its (new) simulation, pauses and measures when the
  /// run is over. Returns a line to show once, else empty.
  std::string update(SimSession& session);
  /// Measures the current step's question on the session's state now.
  void measure(const SimSession& session);
  /// Leaves the lesson; the scene stays, the highlight goes.
  void end(AppState& s);

 private:
  const Lesson* m_lesson = nullptr;
  std::optional<std::size_t> m_n;  // --n
  int m_step = 0;
  sim::SimParams m_startParams;  // the parameters before the lesson
  bool m_pendingStart = false;   // the step's run starts at the next update()
  double m_runFrom = 0.0, m_runUntil = -1.0;
  double m_spreadBefore = -1.0;
  LessonAnswer m_answer;
  bool m_measured = false;
};

}  // namespace bhviz::app
