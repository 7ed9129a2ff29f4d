// The BLAS core decision (kernels/blas_core.hpp): CPU features + the core OpenBLAS runs + the
// environment -> re-execute with which core, the reason the header and the trace give, and the one
// warning line. The start-up around it (the re-execution itself) is tests/unit/blas_core.sh.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/blas_core.hpp"

using namespace sp::kernels;

namespace {

CpuFeatures avx2_cpu(bool amd = false) {
  CpuFeatures f;
  f.amd = amd;
  f.avx2 = f.fma = true;
  return f;
}
CpuFeatures avx512_cpu(bool bf16) {
  CpuFeatures f = avx2_cpu();
  f.avx512f = f.avx512bw = f.avx512cd = f.avx512dq = f.avx512vl = true;
  f.avx512_bf16 = bf16;
  return f;
}
CpuFeatures pre_avx2_cpu() { return {}; }

// OpenBLAS runs `in_use`; OPENBLAS_CORETYPE and the re-execution's marker as given (nullopt: unset).
BlasCoreDecision decide(const CpuFeatures& cpu, const std::string& in_use, std::optional<std::string> coretype,
                        std::optional<std::string> marker) {
  return decide_blas_core(BlasCoreInputs{cpu, in_use, std::move(coretype), std::move(marker)});
}
BlasCoreDecision detected(const CpuFeatures& cpu, const std::string& core) {
  return decide(cpu, core, std::nullopt, std::nullopt);
}
BlasCoreDecision forced(const CpuFeatures& cpu, const std::string& coretype, const std::string& in_use) {
  return decide(cpu, in_use, coretype, std::nullopt);
}

// A decision that runs the core OpenBLAS runs (no re-execution), for this reason, with this warning.
void expect_kept(const BlasCoreDecision& d, const std::string& core, const std::string& reason,
                 const std::string& warning = "") {
  EXPECT_FALSE(d.reexec);
  EXPECT_EQ(d.core, core);
  EXPECT_EQ(d.reason, reason);
  EXPECT_EQ(d.warning, warning);
}

}  // namespace

TEST(BlasCore, BestCoreFollowsTheFeatures) {
  EXPECT_EQ(best_blas_core(avx512_cpu(true)), "Cooperlake");
  EXPECT_EQ(best_blas_core(avx512_cpu(false)), "SkylakeX");
  EXPECT_EQ(best_blas_core(avx2_cpu()), "Haswell");
  EXPECT_EQ(best_blas_core(avx2_cpu(/*amd=*/true)), "Zen");
  EXPECT_EQ(best_blas_core(pre_avx2_cpu()), "");
  // AVX-512 F without BW/DQ/VL (Knights Landing) is not what the SkylakeX kernels need.
  CpuFeatures knl = avx2_cpu();
  knl.avx512f = knl.avx512cd = true;
  EXPECT_EQ(best_blas_core(knl), "Haswell");
  CpuFeatures no_fma = avx2_cpu();
  no_fma.fma = false;
  EXPECT_EQ(best_blas_core(no_fma), "");
}

TEST(BlasCore, AGenericCoreOnAVectorCpuIsReplacedByTheBestCore) {
  const BlasCoreDecision d = detected(avx512_cpu(true), "Prescott");
  EXPECT_TRUE(d.reexec);
  EXPECT_EQ(d.core, "Cooperlake");
  EXPECT_EQ(d.reason,
            "chosen by scaleprobe: OpenBLAS detected Prescott on a CPU with "
            "avx2,fma,avx512f,avx512bw,avx512cd,avx512dq,avx512vl,avx512_bf16");
  EXPECT_EQ(d.warning, "");  // the header and the trace say it; nothing went wrong
  EXPECT_EQ(detected(avx512_cpu(false), "Nehalem").core, "SkylakeX");
  EXPECT_EQ(detected(avx2_cpu(), "Core2").core, "Haswell");
  EXPECT_EQ(detected(avx2_cpu(true), "Barcelona").core, "Zen");
  EXPECT_TRUE(detected(avx2_cpu(), "prescott").reexec);  // OpenBLAS compares names without case
}

TEST(BlasCore, AnyLowerTierIsReplaced) {
  EXPECT_EQ(detected(avx2_cpu(), "Sandybridge").core, "Haswell");  // AVX-only kernels on AVX2
  EXPECT_EQ(detected(avx2_cpu(true), "Excavator").core, "Zen");
  EXPECT_EQ(detected(avx512_cpu(false), "Haswell").core, "SkylakeX");
  EXPECT_EQ(detected(avx512_cpu(true), "Zen").core, "Cooperlake");
  EXPECT_EQ(detected(avx512_cpu(true), "SkylakeX").core, "Cooperlake");
}

TEST(BlasCore, TheRightTierOrAnUnknownCoreIsLeftAlone) {
  const std::vector<std::pair<CpuFeatures, std::string>> cases = {
      {avx512_cpu(true), "Cooperlake"}, {avx512_cpu(false), "SkylakeX"},
      {avx2_cpu(), "Haswell"},          {avx2_cpu(), "Zen"},
      {avx2_cpu(true), "Haswell"},      {avx512_cpu(true), "SapphireRapids"},
      {avx512_cpu(true), "Unknown"},    {pre_avx2_cpu(), "Prescott"}};
  for (const auto& [cpu, core] : cases) {
    SCOPED_TRACE(core + " on " + cpu.names());
    expect_kept(detected(cpu, core), core, "detected by OpenBLAS");
  }
}

TEST(BlasCore, AForcedGenericCoreRunsWithOneWarningLine) {
  const BlasCoreDecision d = forced(avx512_cpu(true), "Prescott", "Prescott");
  expect_kept(d, "Prescott", "forced by OPENBLAS_CORETYPE=Prescott",
              "OPENBLAS_CORETYPE=Prescott runs OpenBLAS' generic SSE kernels (Prescott) on a CPU with "
              "avx2,fma,avx512f,avx512bw,avx512cd,avx512dq,avx512vl,avx512_bf16: its GEMMs are slower than this "
              "CPU's Cooperlake kernels; unset it to have them chosen");
  EXPECT_EQ(d.warning.find('\n'), std::string::npos);
  EXPECT_NE(forced(avx2_cpu(), "Sandybridge", "Sandybridge").warning.find("AVX kernels (Sandybridge)"),
            std::string::npos);
  // OpenBLAS maps a 32-bit core to Prescott: the reason says what runs.
  const BlasCoreDecision katmai = forced(avx2_cpu(), "Katmai", "Prescott");
  EXPECT_EQ(katmai.reason, "forced by OPENBLAS_CORETYPE=Katmai (OpenBLAS runs Prescott)");
  EXPECT_NE(katmai.warning, "");
}

TEST(BlasCore, AForcedVectorCoreOrAGenericCpuGetsNoWarning) {
  // Some machines set OPENBLAS_CORETYPE=Haswell on an AVX-512 CPU: a choice, recorded, not warned about.
  expect_kept(forced(avx512_cpu(true), "Haswell", "Haswell"), "Haswell", "forced by OPENBLAS_CORETYPE=Haswell");
  EXPECT_EQ(forced(pre_avx2_cpu(), "Prescott", "Prescott").warning, "");
  EXPECT_EQ(forced(avx2_cpu(), "haswell", "Haswell").reason, "forced by OPENBLAS_CORETYPE=haswell");
}

// A core above the CPU's features would die on its first GEMM (SIGILL, seen with SkylakeX on an
// AVX2 EPYC): refused in one line, never a warning. Cooperlake forced on such a CPU is "not found"
// by OpenBLAS 0.3.21, which then runs the CPU's own core: nothing to refuse.
TEST(BlasCore, AForcedCoreTheCpuCannotRunIsRefused) {
  const BlasCoreDecision d = forced(avx2_cpu(/*amd=*/true), "SkylakeX", "SkylakeX");
  EXPECT_FALSE(d.reexec);
  EXPECT_EQ(d.error,
            "OPENBLAS_CORETYPE=SkylakeX: this CPU (avx2,fma) cannot run OpenBLAS' AVX-512 kernels (SkylakeX); "
            "unset it or name a core of its features (Zen)");
  EXPECT_EQ(d.error.find('\n'), std::string::npos);
  EXPECT_NE(forced(avx512_cpu(false), "Cooperlake", "Cooperlake").error, "");
  EXPECT_NE(forced(pre_avx2_cpu(), "Haswell", "Haswell").error.find("name a core of its features"), std::string::npos);
  EXPECT_EQ(forced(avx2_cpu(true), "Cooperlake", "Zen").error, "");
  EXPECT_EQ(forced(avx512_cpu(true), "SkylakeX", "SkylakeX").error, "");
  EXPECT_EQ(forced(avx2_cpu(), "Haswell", "Haswell").error, "");
  EXPECT_EQ(forced(pre_avx2_cpu(), "Sandybridge", "Sandybridge").error, "");  // below AVX2 not told apart
}

TEST(BlasCore, TheReexecutedProcessChecksTheCoreItGot) {
  const BlasCoreDecision parent = detected(avx512_cpu(false), "Prescott");
  ASSERT_TRUE(parent.reexec);
  const BlasCoreDecision child = decide(avx512_cpu(false), "SkylakeX", "SkylakeX", "Prescott");
  EXPECT_FALSE(child.reexec);
  EXPECT_EQ(child.core, "SkylakeX");
  EXPECT_EQ(child.reason, parent.reason);  // the parent's promise is what the child records
  EXPECT_EQ(child.warning, "");

  const BlasCoreDecision refused = decide(avx512_cpu(false), "Haswell", "SkylakeX", "Prescott");
  EXPECT_FALSE(refused.reexec);  // never a second time
  EXPECT_EQ(refused.core, "Haswell");
  EXPECT_EQ(refused.reason, parent.reason + ", but it runs Haswell instead of SkylakeX");
  EXPECT_EQ(refused.warning,
            "OpenBLAS runs its Haswell kernels, not the SkylakeX ones scaleprobe chose for this CPU "
            "(avx2,fma,avx512f,avx512bw,avx512cd,avx512dq,avx512vl; OpenBLAS detected Prescott)");
}

TEST(BlasCore, AMarkerWithoutACoreTypeForbidsAnotherReexecution) {
  const BlasCoreDecision d = decide(avx512_cpu(true), "Prescott", std::nullopt, "Prescott");
  EXPECT_FALSE(d.reexec);
  EXPECT_EQ(d.reason, "detected by OpenBLAS");
}

TEST(BlasCore, FeatureNames) {
  EXPECT_EQ(pre_avx2_cpu().names(), "none");
  EXPECT_EQ(avx2_cpu().names(), "avx2,fma");
  EXPECT_TRUE(avx512_cpu(false).x86_64_v4());
  EXPECT_FALSE(avx2_cpu().x86_64_v4());
}
