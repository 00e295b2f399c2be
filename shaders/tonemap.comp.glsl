#version 450 core
// Tone mapping: the linear light (scene + bloom) to display colours, 1 - exp(-exposure c) per
// channel (dense cores go white, faint outskirts keep their hue), then gamma, over the
// background; into an RGBA8 image the size of the scene.
layout(local_size_x = 16, local_size_y = 16) in;

uniform sampler2D uScene;
uniform sampler2D uBloom;
uniform float uExposure;
uniform float uInvGamma;
uniform float uBloomStrength;
uniform vec3 uBackground;
uniform ivec2 uSize;  // the output's pixels (the scene's too)
layout(rgba8, binding = 0) writeonly uniform image2D uOut;

void main() {
  ivec2 p = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(p, uSize))) return;
  vec2 uv = (vec2(p) + 0.5) / vec2(uSize);
  vec3 c = texelFetch(uScene, p, 0).rgb;
  if (uBloomStrength > 0.0) c += uBloomStrength * textureLod(uBloom, uv, 0.0).rgb;
  vec3 m = pow(1.0 - exp(-uExposure * max(c, vec3(0.0))), vec3(uInvGamma));
  imageStore(uOut, p, vec4(m + uBackground * (1.0 - m), 1.0));
}
