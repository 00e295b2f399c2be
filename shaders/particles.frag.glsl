#version 450 core
// A soft round sprite: a gaussian exp(-s r^2), shifted to reach zero at the rim (r = 1) and
// scaled to 1 at the centre. Added up (GL_ONE, GL_ONE) in the floating-point scene buffer.

in vec3 vColour;
uniform float uSharpness;
out vec4 fragColour;

void main() {
  vec2 d = gl_PointCoord * 2.0 - 1.0;
  float r2 = dot(d, d);
  if (r2 >= 1.0) discard;
  float rim = exp(-uSharpness);
  float w = (exp(-uSharpness * r2) - rim) / (1.0 - rim);
  fragColour = vec4(vColour * w, 0.0);
}
