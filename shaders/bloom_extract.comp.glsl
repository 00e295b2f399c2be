#version 450 core
// Bloom, step 1: a quarter-resolution copy of the scene's light above uThreshold. Four
// bilinear taps average the 4x4 scene pixels under each output pixel. The post-processing
// passes are compute shaders: on GPUs built for compute (H100, H200) few of the SMs run
// fragment shaders, every SM runs compute.
layout(local_size_x = 16, local_size_y = 16) in;

uniform sampler2D uScene;
uniform vec2 uTexel;  // one scene pixel in texture coordinates
uniform float uThreshold;
uniform ivec2 uSize;  // the output's pixels
layout(rgba16f, binding = 0) writeonly uniform image2D uOut;

void main() {
  ivec2 p = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(p, uSize))) return;
  vec2 uv = (vec2(p) + 0.5) / vec2(uSize);
  vec3 c = textureLod(uScene, uv + uTexel * vec2(-1.0, -1.0), 0.0).rgb +
           textureLod(uScene, uv + uTexel * vec2(1.0, -1.0), 0.0).rgb +
           textureLod(uScene, uv + uTexel * vec2(-1.0, 1.0), 0.0).rgb +
           textureLod(uScene, uv + uTexel * vec2(1.0, 1.0), 0.0).rgb;
  c *= 0.25;
  float peak = max(max(c.r, c.g), c.b);
  float keep = max(peak - uThreshold, 0.0) / max(peak, 1e-6);
  imageStore(uOut, p, vec4(c * keep, 1.0));
}
