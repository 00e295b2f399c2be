#pragma once
// The interactive front end: a window, the panels, and the main loop
//   events → UI → advance the simulation (a per-frame budget) → write the vertex buffer →
//   render → swap.
// Structural changes (scenario, N, seed, backend, reset) rebuild the simulation at the top of the
// next frame; live parameters reach it by value before the next substep.

#include <iosfwd>

#include "app/core/cli.h"

namespace bhviz::app {

/// Particles of the default scene when --n is not given, by backend.
/// The N the window's backend is probed for when --n is not given: a device backend must have
/// room for its interactive N (BackendTraits::interactiveParticles).
inline constexpr std::size_t kWindowParticlesProbe = 1'000'000;
inline constexpr std::size_t kWindowParticlesCpu = 20'000;

/// Runs the window until it is closed, Esc, or --quit-after frames; then writes --screenshot.
/// Notes to `out`, errors to `err`. Returns the exit status: 0, or 1 when a GL error was seen.
/// Throws NoDisplay (no display: exit 2), WindowUnavailable, and whatever building the first
/// simulation throws (BackendUnavailable, InvalidParameter, …) for main to report.
int runWindow(const Options& options, std::ostream& out, std::ostream& err);

}  // namespace bhviz::app
