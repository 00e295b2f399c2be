#version 450 core
// Instanced lines: each instance one segment from iA to iB (the fragment shader is the boxes').

layout(location = 0) in float aEnd;   // 0 at a, 1 at b
layout(location = 1) in vec3 iA;      // per line
layout(location = 2) in vec3 iB;      // per line
layout(location = 3) in vec4 iColour; // per line: RGB and opacity

uniform mat4 uViewProj;
out vec4 vColour;

void main() {
  gl_Position = uViewProj * vec4(mix(iA, iB, aEnd), 1.0);
  vColour = iColour;
}
