#version 450 core
// Extinction, step 2: per cell of the dust grid, the slices' optical depths summed front to
// back into the boundaries of a 3D texture (layer 0: the front, τ = 0; layer k: the dust of
// slices 0..k−1), which the stars sample at their depth (sprite_geometry.glsl). Each sum is
// zeroed once read, so the next frame's dust splat starts from nothing.
layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = 2) buffer Dust { uint dust[]; };
layout(r32f, binding = 1) writeonly uniform image3D uOpticalDepth;

uniform ivec2 uCells;
uniform int uSlices;
uniform float uInvFixedScale;

void main() {
  ivec2 c = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(c, uCells))) return;
  uint plane = uint(uCells.x * uCells.y);
  uint i = uint(c.y * uCells.x + c.x);
  float tau = 0.0;
  imageStore(uOpticalDepth, ivec3(c, 0), vec4(0.0));
  for (int k = 0; k < uSlices; ++k) {
    uint j = uint(k) * plane + i;
    tau += float(dust[j]) * uInvFixedScale;
    dust[j] = 0u;
    imageStore(uOpticalDepth, ivec3(c, k + 1), vec4(tau));
  }
}
