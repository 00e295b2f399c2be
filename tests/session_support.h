#pragma once
// What the tests of the front ends' session (app::SimSession) share.

#include <cstddef>

#include "app/core/settings.h"

namespace bhviz::test {

/// A small Plummer sphere on the CPU backend, as the session builds scenes.
inline app::SceneSettings plummerScene(std::size_t n) {
  app::SceneSettings scene;
  scene.scenario = "plummer";
  scene.n = n;
  scene.seed = 4;
  scene.backend = app::BackendChoice::Cpu;
  return scene;
}

}  // namespace bhviz::test
