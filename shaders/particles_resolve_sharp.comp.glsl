#version 450 core
// The compute splat's second pass without depth of field: the full-resolution fixed-point sums of
// particles_splat.comp.glsl into the floating-point scene buffer, every pixel written, each sum
// zeroed once read (so the next frame's splat starts from nothing without a clear pass). With
// depth of field, particles_resolve.comp.glsl adds the coarser levels too.
layout(local_size_x = 64, local_size_y = 4) in;

layout(std430, binding = 1) buffer Light { uint light[]; };  // 3 planes of pixels
layout(rgba16f, binding = 0) writeonly uniform image2D uScene;

uniform ivec2 uViewport;
uniform float uInvFixedScale;

void main() {
  ivec2 p = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(p, uViewport))) return;
  uint plane = uint(uViewport.x * uViewport.y);
  uint i = uint(p.y * uViewport.x + p.x);
  vec3 c = vec3(float(light[i]), float(light[i + plane]), float(light[i + 2u * plane]));
  light[i] = 0u;
  light[i + plane] = 0u;
  light[i + 2u * plane] = 0u;
  // A saturated sum stays the largest finite half float, not infinity.
  imageStore(uScene, p, vec4(min(c * uInvFixedScale, vec3(65504.0)), 0.0));
}
