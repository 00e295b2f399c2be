#pragma once
// A scripted camera for demos: keys of (time, azimuth, elevation, distance), interpolated
// linearly in time and held at either end, plus a steady spin. Pure math, no GL: the window
// and the headless frames apply it alike; the user's mouse overrides it in the window.

#include <vector>

#include "render/camera.h"

namespace bhviz::render {

struct CameraKey {
  float time = 0.0f;       ///< [simulation time]
  float azimuth = 0.0f;    ///< the camera's yaw [rad]
  float elevation = 0.5f;  ///< the camera's pitch [rad], within ±Camera::kMaxPitch
  float distance = 1.0f;   ///< relative to the framed view's distance [1]
};

struct CameraScript {
  float autoRotate = 0.0f;      ///< spin about +z [rad/s]
  std::vector<CameraKey> keys;  ///< increasing times; empty = no scripted orbit
};

/// The key at `time`: linear between the two keys around it, the first or last outside them.
/// `keys` must not be empty.
CameraKey sampleCameraPath(const std::vector<CameraKey>& keys, float time);

/// Sets yaw, pitch and distance (framedDistance × the key's) from the path at `time`; the
/// target, field of view and auto-rotation are left alone. No keys: nothing changes.
void applyCameraPath(Camera& camera, const CameraScript& script, float time, float framedDistance);

}  // namespace bhviz::render
