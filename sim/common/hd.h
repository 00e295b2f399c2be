#pragma once
// BHVIZ_HD marks per-element math that both the OpenMP loops and the CUDA kernels call.
// Under nvcc it expands to __host__ __device__; under a plain C++ compiler to nothing.

#if defined(__CUDACC__)
#define BHVIZ_HD __host__ __device__
#else
#define BHVIZ_HD
#endif
