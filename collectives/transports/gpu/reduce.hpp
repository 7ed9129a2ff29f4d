// The device side of a GPU transport: a local reduction for our own schedules and the
// verification's count of wrong elements, both on the device (CUDA kernels in reduce.cu), for
// every Dtype and Op. Pointers are device memory; the calls are ordered on `stream` and return
// after enqueueing (count_mismatches waits for its result). CUDA errors are sp::Error.
#pragma once
#include <cstddef>
#include <string>

#include "collectives/datatypes.hpp"

struct CUstream_st;

namespace sp::coll::gpu {

using Stream = CUstream_st*;  // cudaStream_t, without including the CUDA headers here

// inout[i] = op(inout[i], in[i]) for i < count.
void reduce(void* inout, const void* in, std::size_t count, Dtype d, Op o, Stream stream);

// Elements i < count with got[i] != want[i] (compared as values; bf16 as its bits).
unsigned long long count_mismatches(const void* got, const void* want, std::size_t count, Dtype d, Stream stream);

// Devices visible to this process: 0 when there is no device or no NVIDIA driver at all; any other
// CUDA error (a driver that is loaded but fails) is an sp::Error with CUDA's message — never "no
// GPU", which would turn every GPU test into Not Run.
int device_count();

// The device's UUID as nvidia-smi writes it ("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx").
std::string device_uuid(int device);

}  // namespace sp::coll::gpu
