#version 450 core
// Tone mapping: the linear light (scene + bloom) to display colours, 1 - exp(-exposure c) per
// channel (dense cores go white, faint outskirts keep their hue), then gamma, over the
// background.
in vec2 vUv;
uniform sampler2D uScene;
uniform sampler2D uBloom;
uniform float uExposure;
uniform float uInvGamma;
uniform float uBloomStrength;
uniform vec3 uBackground;
out vec4 fragColour;

void main() {
  vec3 c = texture(uScene, vUv).rgb;
  if (uBloomStrength > 0.0) c += uBloomStrength * texture(uBloom, vUv).rgb;
  vec3 m = pow(1.0 - exp(-uExposure * max(c, vec3(0.0))), vec3(uInvGamma));
  fragColour = vec4(m + uBackground * (1.0 - m), 1.0);
}
