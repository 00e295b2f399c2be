#version 450 core
// Bloom, step 2: one direction of a separable gaussian (9 taps as 5 bilinear fetches).
layout(local_size_x = 16, local_size_y = 16) in;

uniform sampler2D uSource;
uniform vec2 uStep;   // one texel along the blur direction
uniform ivec2 uSize;  // the output's pixels (the source's too)
layout(rgba16f, binding = 0) writeonly uniform image2D uOut;

const float kWeights[3] = float[](0.2270270270, 0.3162162162, 0.0702702703);
const float kOffsets[3] = float[](0.0, 1.3846153846, 3.2307692308);

void main() {
  ivec2 p = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(p, uSize))) return;
  vec2 uv = (vec2(p) + 0.5) / vec2(uSize);
  vec3 c = textureLod(uSource, uv, 0.0).rgb * kWeights[0];
  for (int i = 1; i < 3; ++i) {
    c += textureLod(uSource, uv + uStep * kOffsets[i], 0.0).rgb * kWeights[i];
    c += textureLod(uSource, uv - uStep * kOffsets[i], 0.0).rgb * kWeights[i];
  }
  imageStore(uOut, p, vec4(c, 1.0));
}
