#include "kernels/cpu_features.hpp"

#include <utility>

#if defined(__x86_64__)
#include <cpuid.h>

#include <cstring>
#endif

namespace sp::kernels {

namespace {

#if defined(__x86_64__)
// GCC 12's __builtin_cpu_is knows "amd" but not Hygon, whose Dhyana is a Zen core.
bool amd_or_hygon() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return false;
  char vendor[13];
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  vendor[12] = '\0';
  return std::strcmp(vendor, "AuthenticAMD") == 0 || std::strcmp(vendor, "HygonGenuine") == 0;
}
#endif

CpuFeatures read_cpu_features() {
  CpuFeatures f;
#if defined(__x86_64__)
  __builtin_cpu_init();
  f.amd = amd_or_hygon();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512cd = __builtin_cpu_supports("avx512cd");
  f.avx512dq = __builtin_cpu_supports("avx512dq");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512_bf16 = __builtin_cpu_supports("avx512bf16");
#endif
  return f;
}

}  // namespace

std::string CpuFeatures::names() const {
  const std::pair<bool, const char*> all[] = {
      {avx2, "avx2"},         {fma, "fma"},           {avx512f, "avx512f"},   {avx512bw, "avx512bw"},
      {avx512cd, "avx512cd"}, {avx512dq, "avx512dq"}, {avx512vl, "avx512vl"}, {avx512_bf16, "avx512_bf16"}};
  std::string s;
  for (const auto& [present, name] : all) {
    if (!present) continue;
    if (!s.empty()) s += ',';
    s += name;
  }
  return s.empty() ? "none" : s;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = read_cpu_features();
  return f;
}

}  // namespace sp::kernels
