#pragma once
// An orbit camera: it looks at `target` from `distance` away, at azimuth `yaw` (about the world
// +z axis, plus the auto-rotation angle) and elevation `pitch` above the x–y plane (the plane
// of a galaxy's disk). Pure math (GLM), no GL: the window maps mouse input onto it, the
// headless run sets it once, the tests check it.

#include <glm/mat4x4.hpp>
#include <glm/vec2.hpp>
#include <glm/vec3.hpp>

namespace bhviz::render {

class Camera {
 public:
  static constexpr float kMaxPitch = 1.5620697f;  ///< 89.5° [rad]: lookAt needs up ≠ view axis

  glm::vec3 target{0.0f};        ///< the point looked at and orbited [world length]
  float distance = 10.0f;        ///< eye to target [world length]
  float yaw = 0.0f;              ///< azimuth of the eye about +z, from +x [rad]
  float pitch = 0.5f;            ///< elevation of the eye above the x–y plane [rad]
  float fovY = 0.7853982f;       ///< vertical field of view [rad] (45°)
  float autoRotateSpeed = 0.0f;  ///< added to the azimuth per second [rad/s]; 0 = off
  float autoRotateAngle = 0.0f;  ///< accumulated auto-rotation, in [0, 2π) [rad]
  float minDistance = 1e-3f;     ///< zoom limits [world length]
  float maxDistance = 1e6f;

  /// Rotates about the target by a drag of (dx, dy) pixels: `radiansPerPixel` per pixel,
  /// right = the scene turns right, up = the eye rises. The pitch stays within ±kMaxPitch.
  void orbit(float dxPixels, float dyPixels, float radiansPerPixel = 0.005f);
  /// Moves the target within the view plane so that the point under the cursor follows a drag
  /// of (dx, dy) pixels (y down) in a viewport `viewportHeight` pixels tall.
  void pan(float dxPixels, float dyPixels, float viewportHeight);
  /// Multiplies the distance by `factor` (< 1 zooms in), clamped to [minDistance, maxDistance].
  void zoom(float factor);
  /// Advances the auto-rotation by `seconds`.
  void advance(float seconds);
  /// Aims at `centre` from far enough that a sphere of `radius` fills the smaller field of view.
  void frameSphere(const glm::vec3& centre, float radius, float aspect);

  /// The azimuth actually used: yaw + autoRotateAngle [rad].
  float azimuth() const { return yaw + autoRotateAngle; }
  glm::vec3 eye() const;
  /// Unit vectors of the view: forward (eye → target), right, up.
  glm::vec3 forward() const;
  glm::vec3 right() const;
  glm::vec3 up() const;
  float nearPlane() const { return distance * 1e-3f; }
  float farPlane() const { return distance * 1e3f; }

  glm::mat4 view() const;
  glm::mat4 projection(float aspect) const;
  /// Pixels per world unit at unit depth for a viewport `viewportHeight` pixels tall.
  float pixelsPerUnitAtUnitDepth(float viewportHeight) const;
  /// Where `world` lands in a width × height image: x right and y down from the top-left
  /// corner [pixels], z the view depth [world length] (negative behind the eye).
  glm::vec3 project(const glm::vec3& world, float width, float height) const;
};

}  // namespace bhviz::render
