#include "kernels/blas_core.hpp"

#include <strings.h>

#include <string_view>

namespace sp::kernels {

namespace {

// The instruction sets OpenBLAS' x86-64 cores use, lowest first.
enum class Tier { unknown, sse, avx, avx2, avx512, avx512_bf16 };

bool same_core(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// Every name 0.3.21's openblas_get_corename() returns on x86-64 (driver/others/dynamic.c), by the
// kernels behind it: Excavator runs Piledriver's AVX/FMA kernels and Zen Haswell's; Cooperlake is
// SkylakeX plus the BF16 kernels. "Unknown" and names of later releases are Tier::unknown.
Tier tier_of(std::string_view core) {
  struct Entry {
    const char* name;
    Tier tier;
  };
  static constexpr Entry kCores[] = {
      {"Katmai", Tier::sse},
      {"Coppermine", Tier::sse},
      {"Northwood", Tier::sse},
      {"Prescott", Tier::sse},
      {"Banias", Tier::sse},
      {"Atom", Tier::sse},
      {"Core2", Tier::sse},
      {"Penryn", Tier::sse},
      {"Dunnington", Tier::sse},
      {"Nehalem", Tier::sse},
      {"Athlon", Tier::sse},
      {"Opteron", Tier::sse},
      {"Opteron_SSE3", Tier::sse},
      {"Barcelona", Tier::sse},
      {"Nano", Tier::sse},
      {"Bobcat", Tier::sse},
      {"Sandybridge", Tier::avx},
      {"Bulldozer", Tier::avx},
      {"Piledriver", Tier::avx},
      {"Steamroller", Tier::avx},
      {"Excavator", Tier::avx},
      {"Haswell", Tier::avx2},
      {"Zen", Tier::avx2},
      {"SkylakeX", Tier::avx512},
      {"Cooperlake", Tier::avx512_bf16},
  };
  for (const Entry& e : kCores)
    if (same_core(core, e.name)) return e.tier;
  return Tier::unknown;
}

const char* tier_words(Tier t) {
  switch (t) {
    case Tier::sse:
      return "generic SSE";
    case Tier::avx:
      return "AVX";
    case Tier::avx2:
      return "AVX2";
    case Tier::avx512:
      return "AVX-512";
    case Tier::avx512_bf16:
      return "AVX-512 BF16";
    case Tier::unknown:
      break;
  }
  return "unknown";
}

std::string chosen_reason(const BlasCoreInputs& in, const std::string& detected) {
  return "chosen by scaleprobe: OpenBLAS detected " + detected + " on a CPU with " + in.cpu.names();
}

}  // namespace

// 0.3.21's force_coretype() stops its name search before "Cooperlake", so OPENBLAS_CORETYPE=Cooperlake
// is "not found" there and falls to its fallback on CPU features, which picks Cooperlake exactly when
// the CPU has AVX-512 BF16, i.e. when this asks for it (and the re-executed process checks).
std::string best_blas_core(const CpuFeatures& cpu) {
  const bool avx512 = cpu.avx512f && cpu.avx512bw && cpu.avx512dq && cpu.avx512vl;
  if (avx512 && cpu.avx512_bf16) return "Cooperlake";
  if (avx512) return "SkylakeX";
  if (cpu.avx2 && cpu.fma) return cpu.amd ? "Zen" : "Haswell";
  return "";
}

BlasCoreDecision decide_blas_core(const BlasCoreInputs& in) {
  const std::string best = best_blas_core(in.cpu);
  BlasCoreDecision d;
  d.core = in.in_use;
  if (in.detected && in.coretype) {
    // The re-executed process: check that OpenBLAS took the core chosen for it.
    d.reason = chosen_reason(in, *in.detected);
    if (!same_core(in.in_use, *in.coretype)) {
      d.reason += ", but it runs " + in.in_use + " instead of " + *in.coretype;
      d.warning = "OpenBLAS runs its " + in.in_use + " kernels, not the " + *in.coretype +
                  " ones scaleprobe chose for this CPU (" + in.cpu.names() + "; OpenBLAS detected " + *in.detected +
                  ")";
    }
    return d;
  }
  if (in.coretype) {
    // The user's choice is run as given, and said once when it is a generic core on a vector CPU.
    d.reason = "forced by OPENBLAS_CORETYPE=" + *in.coretype;
    if (!same_core(in.in_use, *in.coretype)) d.reason += " (OpenBLAS runs " + in.in_use + ")";
    const Tier used = tier_of(in.in_use);
    // Below AVX2 + FMA the table cannot tell AVX from SSE: only AVX2 and above are refused there.
    const Tier cpu_tier = best.empty() ? Tier::avx : tier_of(best);
    if (used != Tier::unknown && used > cpu_tier) {
      d.error = "OPENBLAS_CORETYPE=" + *in.coretype + ": this CPU (" + in.cpu.names() + ") cannot run OpenBLAS' " +
                tier_words(used) + " kernels (" + in.in_use + "); unset it or name a core of its features" +
                (best.empty() ? "" : " (" + best + ")");
      return d;
    }
    if (!best.empty() && (used == Tier::sse || used == Tier::avx))
      d.warning = "OPENBLAS_CORETYPE=" + *in.coretype + " runs OpenBLAS' " + tier_words(used) + " kernels (" +
                  in.in_use + ") on a CPU with " + in.cpu.names() + ": its GEMMs are slower than this CPU's " + best +
                  " kernels; unset it to have them chosen";
    return d;
  }
  d.reason = "detected by OpenBLAS";
  // Without OPENBLAS_CORETYPE the marker alone (a stale environment) still forbids a re-execution.
  const Tier used = tier_of(in.in_use);
  if (!in.detected && !best.empty() && used != Tier::unknown && used < tier_of(best)) {
    d.reexec = true;
    d.core = best;
    d.reason = chosen_reason(in, in.in_use);  // what the re-executed process will say
  }
  return d;
}

}  // namespace sp::kernels
