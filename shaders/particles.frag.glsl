#version 450 core
// One fragment of a soft round sprite, added up (GL_ONE, GL_ONE) in the floating-point scene
// buffer.
#include "sprite_profile.glsl"

in vec3 vColour;
out vec4 fragColour;

void main() {
  vec2 d = gl_PointCoord * 2.0 - 1.0;
  float r2 = dot(d, d);
  if (r2 >= 1.0) discard;
  fragColour = vec4(vColour * spriteWeight(r2), 0.0);
}
