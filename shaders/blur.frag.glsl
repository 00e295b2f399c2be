#version 450 core
// Bloom, step 2: one direction of a separable gaussian (9 taps as 5 bilinear fetches).
in vec2 vUv;
uniform sampler2D uSource;
uniform vec2 uStep;  // one texel along the blur direction
out vec4 fragColour;

const float kWeights[3] = float[](0.2270270270, 0.3162162162, 0.0702702703);
const float kOffsets[3] = float[](0.0, 1.3846153846, 3.2307692308);

void main() {
  vec3 c = texture(uSource, vUv).rgb * kWeights[0];
  for (int i = 1; i < 3; ++i) {
    c += texture(uSource, vUv + uStep * kOffsets[i]).rgb * kWeights[i];
    c += texture(uSource, vUv - uStep * kOffsets[i]).rgb * kWeights[i];
  }
  fragColour = vec4(c, 1.0);
}
