#version 450 core
// Bloom, step 1: a quarter-resolution copy of the scene's light above uThreshold. Four
// bilinear taps average the 4x4 scene pixels under each output pixel.
in vec2 vUv;
uniform sampler2D uScene;
uniform vec2 uTexel;  // one scene pixel in texture coordinates
uniform float uThreshold;
out vec4 fragColour;

void main() {
  vec3 c = texture(uScene, vUv + uTexel * vec2(-1.0, -1.0)).rgb +
           texture(uScene, vUv + uTexel * vec2(1.0, -1.0)).rgb +
           texture(uScene, vUv + uTexel * vec2(-1.0, 1.0)).rgb +
           texture(uScene, vUv + uTexel * vec2(1.0, 1.0)).rgb;
  c *= 0.25;
  float peak = max(max(c.r, c.g), c.b);
  float keep = max(peak - uThreshold, 0.0) / max(peak, 1e-6);
  fragColour = vec4(c * keep, 1.0);
}
