#pragma once
// The camera that follows the action (app/core/camera_mode.h): each frame a sample of the
// particles gives the point to look at (the centre of mass, or a galaxy's densest part) and the
// radius that holds what is drawn; the camera glides there, so that a frame-to-frame jitter of
// the sample does not shake the picture. No GL: the window and the headless frames use it
// alike, and the tests check it on built scenes.

#include <chrono>
#include <cstdint>
#include <glm/vec3.hpp>
#include <string>
#include <vector>

#include "app/core/camera_mode.h"
#include "app/core/view_options.h"
#include "render/camera.h"
#include "sim/particles.h"
#include "sim/simulation.h"

namespace bhviz::app {

/// Where a camera in some mode should look at a state.
struct CameraAim {
  bool valid = false;  ///< false: nothing to follow (no such galaxy, nothing visible)
  glm::vec3 target{0.0f};
  float radius = 1.0f;  ///< holds most of the drawn particles around `target` [length]
};

/// The aim of `mode` at the particles of `p` (every `stride`-th one). The radius is of the
/// particles `view` draws, around the target.
CameraAim aimAt(const sim::Particles& p, const CameraMode& mode, const ViewSettings& view,
                std::size_t stride = 1);

/// About this many particles are enough to aim (the sample's stride follows from N).
inline constexpr std::size_t kAimSample = 8192;

/// Whether a sample taken of a running simulation is old enough to take again: after
/// `seconds` of wall time, and at once where the simulation is another, holds another number of
/// particles or went back (a rewind or a restored state); 0 seconds: always.
class SampleAge {
 public:
  using Clock = std::chrono::steady_clock;
  explicit SampleAge(double seconds = 0.0) : m_seconds(seconds) {}
  /// Whether to sample `sim` at `now`.
  bool due(const sim::Simulation& sim, Clock::time_point now);
  /// A sample of `sim` was taken at `now`.
  void taken(const sim::Simulation& sim, Clock::time_point now);

 private:
  double m_seconds;
  bool m_taken = false;
  const sim::Simulation* m_sim = nullptr;
  std::size_t m_particles = 0;
  std::uint64_t m_substeps = 0;  ///< the simulation's substeps at the last call
  Clock::time_point m_at{};
};

/// The window's resampling interval (AimSampler): a thirtieth of a second, a twelfth of the
/// camera's glide.
inline constexpr double kAimResampleSeconds = 1.0 / 30.0;

/// The particles aimAt reads from a running simulation: a host backend's own state without a
/// copy, a device backend's id-strided sample (Backend::downloadSample), downloaded again once
/// it is `resampleSeconds` old (0: every call). Each download waits for the GPU's queue (0.3–0.4
/// ms a frame at 1 M on an H100/H200, bench_frame); the window's camera glides over
/// CameraFollower::kGlideSeconds, so a sample of a few frames ago aims it as well. Headless
/// frames resample every time: their pictures must not depend on the wall clock.
class AimSampler {
 public:
  explicit AimSampler(double resampleSeconds = 0.0) : m_age(resampleSeconds) {}
  CameraAim aim(const sim::Simulation& sim, const CameraMode& mode, const ViewSettings& view);

 private:
  SampleAge m_age;
  sim::Particles m_sample;
};

/// A saved view: the camera's pose and what it followed.
struct CameraBookmark {
  std::string name;
  glm::vec3 target{0.0f};
  float distance = 1.0f, yaw = 0.0f, pitch = 0.5f;
  CameraMode mode;
};

class CameraFollower {
 public:
  /// `jumpFirst`: the first follow() after construction or reset() puts the camera on its aim
  /// at once (headless frames); else it glides there from where it is (the window).
  explicit CameraFollower(bool jumpFirst = true) : m_jumpFirst(jumpFirst) {}

  /// Glide time constant [s]: after it, 63 % of the way to the aim.
  static constexpr float kGlideSeconds = 0.4f;

  /// Moves `camera` towards `aim` over `seconds`: its target, and with auto-framing its
  /// distance.
  void follow(render::Camera& camera, const CameraMode& mode, const CameraAim& aim, float seconds,
              float aspect);
  /// Starts a glide to `b`'s pose (target, distance, yaw, pitch).
  void flyTo(const CameraBookmark& b) { m_flight = b, m_flying = true; }
  /// Advances a flight started by flyTo; false when none is under way.
  bool fly(render::Camera& camera, float seconds);
  /// Ends a flight where the camera is (the user took the camera).
  void land() { m_flying = false; }
  void reset() { m_started = m_flying = false; }
  /// Auto-framing's distance, glided (a scripted camera's keys are relative to it); 0 before
  /// the first auto-framed follow() [length].
  float framedDistance() const { return m_started ? m_distance : 0.0f; }

 private:
  bool m_jumpFirst;
  bool m_started = false;
  bool m_flying = false;
  CameraBookmark m_flight;
  float m_distance = 0.0f;
};

/// A bookmark of `camera`'s pose and `mode`.
CameraBookmark bookmarkOf(const render::Camera& camera, const CameraMode& mode, std::string name);

}  // namespace bhviz::app
