// Why the copy probe is a plain store loop (core/CMakeLists.txt, core/membw.cpp): one array copied
// into another, 9 times, with or without evicting both from the cache first (clflush), reporting
// the best and median of (read + written bytes) / time. Built twice:
//   g++ -O3 -march=native copy_store_paths.cpp -o copy_memcpy          (GCC turns the loop into memcpy)
//   g++ -O3 -march=native -fno-tree-loop-distribute-patterns copy_store_paths.cpp -o copy_loop
// Usage: ./copy_loop MIB FLUSH(0|1)
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  std::size_t bytes = std::strtoull(argv[1], nullptr, 10) << 20, n = bytes / 8;
  int flush = std::atoi(argv[2]);
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]);
  for (std::size_t i = 0; i < n; ++i) a[i] = 1, b[i] = double(i);
  std::vector<double> rates;
  for (int rep = 0; rep < 9; ++rep) {
    if (flush) {
      for (std::size_t i = 0; i < n; i += 8) _mm_clflush(&a[i]), _mm_clflush(&b[i]);
      _mm_mfence();
    }
    double t0 = now();
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i];
    rates.push_back(2.0 * double(bytes) / (now() - t0) / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  std::printf("%5zu MiB flush=%d: best %.2f median %.2f GB/s\n", bytes >> 20, flush, rates.back(),
              rates[rates.size() / 2]);
  volatile double sink = a[n / 2];
  (void)sink;
}
