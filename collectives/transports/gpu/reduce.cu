// CUDA kernels of the GPU transport: elementwise reduction and verification (reduce.hpp).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <fmt/format.h>

#include <cstdint>

#include "collectives/transports/gpu/device.hpp"
#include "collectives/transports/gpu/reduce.hpp"
#include "core/run/error.hpp"

namespace sp::coll::gpu {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail("CUDA {}: {}", what, cudaGetErrorString(e));
}

template <typename T>
struct Sum {
  __device__ T operator()(T a, T b) const { return a + b; }
};
template <typename T>
struct Max {
  __device__ T operator()(T a, T b) const { return a > b ? a : b; }
};
template <typename T>
struct Min {
  __device__ T operator()(T a, T b) const { return a < b ? a : b; }
};

// bf16 reduces in float and rounds once per element, as the host's reduce_local does.
template <template <typename> class F>
struct Bf16 {
  __device__ __nv_bfloat16 operator()(__nv_bfloat16 a, __nv_bfloat16 b) const {
    return __float2bfloat16_rn(F<float>{}(__bfloat162float(a), __bfloat162float(b)));
  }
};

template <typename T, typename F>
__global__ void reduce_kernel(T* inout, const T* in, std::size_t count, F f) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    inout[i] = f(inout[i], in[i]);
}

template <typename T>
__global__ void mismatch_kernel(const T* got, const T* want, std::size_t count, unsigned long long* wrong) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    local += got[i] != want[i];
  if (local) atomicAdd(wrong, local);
}

constexpr int kThreads = 256;
int blocks_for(std::size_t count) {
  const std::size_t b = (count + kThreads - 1) / kThreads;
  return static_cast<int>(b < 4096 ? (b ? b : 1) : 4096);  // grid-stride loops cover the rest
}

template <typename T, typename F>
void launch_reduce(void* inout, const void* in, std::size_t count, F f, Stream stream) {
  reduce_kernel<<<blocks_for(count), kThreads, 0, stream>>>(static_cast<T*>(inout), static_cast<const T*>(in), count,
                                                            f);
  check(cudaGetLastError(), "reduce kernel launch");
}

template <template <typename> class F>
void reduce_with(void* inout, const void* in, std::size_t count, Dtype d, Stream s) {
  switch (d) {
    case Dtype::f32:
      return launch_reduce<float>(inout, in, count, F<float>{}, s);
    case Dtype::f64:
      return launch_reduce<double>(inout, in, count, F<double>{}, s);
    case Dtype::i32:
      return launch_reduce<std::int32_t>(inout, in, count, F<std::int32_t>{}, s);
    case Dtype::bf16:
      return launch_reduce<__nv_bfloat16>(inout, in, count, Bf16<F>{}, s);
  }
}

}  // namespace

void reduce(void* inout, const void* in, std::size_t count, Dtype d, Op o, Stream stream) {
  if (count == 0) return;
  switch (o) {
    case Op::sum:
      return reduce_with<Sum>(inout, in, count, d, stream);
    case Op::max:
      return reduce_with<Max>(inout, in, count, d, stream);
    case Op::min:
      return reduce_with<Min>(inout, in, count, d, stream);
  }
}

unsigned long long count_mismatches(const void* got, const void* want, std::size_t count, Dtype d, Stream stream) {
  if (count == 0) return 0;
  unsigned long long* wrong = nullptr;
  check(cudaMallocAsync(reinterpret_cast<void**>(&wrong), sizeof *wrong, stream), "cudaMallocAsync");
  check(cudaMemsetAsync(wrong, 0, sizeof *wrong, stream), "cudaMemsetAsync");
  const int blocks = blocks_for(count);
  switch (d) {  // compared as values; bf16 by its bits (equal values have equal bits here: no NaN)
    case Dtype::f32:
      mismatch_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const float*>(got), static_cast<const float*>(want),
                                                       count, wrong);
      break;
    case Dtype::f64:
      mismatch_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const double*>(got),
                                                       static_cast<const double*>(want), count, wrong);
      break;
    case Dtype::i32:
      mismatch_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const std::int32_t*>(got),
                                                       static_cast<const std::int32_t*>(want), count, wrong);
      break;
    case Dtype::bf16:
      mismatch_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const std::uint16_t*>(got),
                                                       static_cast<const std::uint16_t*>(want), count, wrong);
      break;
  }
  check(cudaGetLastError(), "mismatch kernel launch");
  unsigned long long result = 0;
  check(cudaMemcpyAsync(&result, wrong, sizeof result, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaFreeAsync(wrong, stream), "cudaFreeAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return result;
}

int device_count() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaSuccess) return n;
  const bool driver = nvidia_driver_loaded();
  // Without a kernel driver the runtime says "insufficient driver": that is a machine without a GPU.
  if (e == cudaErrorNoDevice || (e == cudaErrorInsufficientDriver && !driver)) return 0;
  fail("CUDA cudaGetDeviceCount: {} ({}){}", cudaGetErrorString(e), cudaGetErrorName(e),
       driver ? "; an NVIDIA driver is loaded, so this is a broken GPU set-up, not a machine without one" : "");
}

std::string device_uuid(int device) {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  const auto* b = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
  std::string hex;
  for (int i = 0; i < 16; ++i) hex += fmt::format("{:02x}", b[i]);
  return fmt::format("GPU-{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4), hex.substr(16, 4),
                     hex.substr(20));
}

}  // namespace sp::coll::gpu
