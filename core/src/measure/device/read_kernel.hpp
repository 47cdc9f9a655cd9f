// A kernel that only reads memory, as fast as the memory gives it: the read ceiling `calibrate`
// holds memory-bound rows to. ATen's reductions fall short of it (on the H200 the faster of a
// bf16 sum and an int32 max read 4.35 TB/s, where decode kernels read up to 4.6), and a ceiling
// below what kernels reach calls every good decode row above_bandwidth.
#pragma once

#include <cstddef>

namespace attnbench {

// Reads `bytes` bytes at `data` once, 16 bytes a load (data 16-byte aligned, bytes a multiple of
// 16), spread over every SM of `device`; enqueued on `stream` (a cudaStream_t), not waited for.
// `sink` (4 bytes of device memory) is written only where the bytes fold to a value nothing
// expects: the loads cannot be left out.
void enqueue_read(const void* data, size_t bytes, void* sink, int device, void* stream);

}  // namespace attnbench
