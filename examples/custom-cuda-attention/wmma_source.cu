// The example kernel as a source backend: no CMake, attnbench compiles this file (and what it
// includes) with nvcc on first use and again after an edit:
//   backends: [flash, {source: examples/custom-cuda-attention/wmma_source.cu, name: wmma}]
// (examples/custom-cuda-attention/source.yaml). The same two files build the CMake plugin.
#include "tiled_attention.cu"
#include "wmma_backend.cpp"
