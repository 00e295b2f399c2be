#version 450 core
// Depth of field's coarser levels of sums (half, quarter, eighth resolution; see
// particles_splat.comp.glsl), one level per dispatch: each cell's three fixed-point sums into a
// floating-point texture, which particles_resolve.comp.glsl samples bilinearly (one filtered fetch
// per pixel and level instead of twelve loads), and zeroed once read, so the next frame's splat
// starts from nothing without a clear.
layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = 1) buffer Light { uint light[]; };  // per level: 3 planes of cells
layout(rgba16f, binding = 0) writeonly uniform image2D uCells;

uniform ivec2 uSize;  // cells of this level
uniform uint uBase;   // where its 3 planes start in light[]
uniform float uInvFixedScale;

void main() {
  ivec2 c = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(c, uSize))) return;
  uint plane = uint(uSize.x * uSize.y);
  uint i = uBase + uint(c.y * uSize.x + c.x);
  vec3 sum = vec3(float(light[i]), float(light[i + plane]), float(light[i + 2u * plane]));
  light[i] = 0u;
  light[i + plane] = 0u;
  light[i + 2u * plane] = 0u;
  imageStore(uCells, c, vec4(min(sum * uInvFixedScale, vec3(65504.0)), 0.0));
}
