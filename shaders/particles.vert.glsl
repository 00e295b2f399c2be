#version 450 core
// Particles as point sprites (the raster pass); see sprite_geometry.glsl.
#include "sprite_geometry.glsl"

layout(location = 0) in vec3 aPosition;
layout(location = 1) in float aValue;

out vec3 vColour;

void main() {
  Sprite s = spriteOf(aPosition, aValue);
  if (!s.visible) {
    // Outside the clip volume, so the point is discarded before rasterisation.
    gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
    gl_PointSize = 1.0;
    vColour = vec3(0.0);
    return;
  }
  gl_Position = s.clip;
  gl_PointSize = s.diameter;
  vColour = s.colour;
}
