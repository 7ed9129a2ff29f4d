#include "kernels/blas.hpp"

#include <cblas.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>

#include "kernels/blas_core.hpp"

namespace sp::kernels {

#ifdef SP_KERNELS_HAVE_OPENBLAS

namespace {

constexpr const char* kCoretype = "OPENBLAS_CORETYPE";
constexpr const char* kDetectedMarker = "SCALEPROBE_BLAS_CORE_DETECTED";
constexpr const char* kTestHook = "SCALEPROBE_TEST_BLAS_DETECTED";

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

BlasCoreInputs live_inputs() {
  BlasCoreInputs in{cpu_features(), openblas_get_corename(), env(kCoretype), env(kDetectedMarker)};
  // The test hook stands in for OpenBLAS' own detection, so only where nothing chose the core.
  if (!in.coretype && !in.detected)
    if (auto pretend = env(kTestHook)) in.in_use = *pretend;
  return in;
}

std::optional<BlasCore>& recorded() {
  static std::optional<BlasCore> core;
  return core;
}

// Before MPI_Init the rank is known only from the launcher's variables (Open MPI, MPICH's Hydra,
// PMIx, srun); without any, every process is alone or cannot tell, and speaks.
bool speaks_for_the_job() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"})
    if (auto rank = env(name)) return *rank == "0";
  return true;
}

// "program: kind: message" on stderr, from the job's first rank only.
void say(char** argv, const char* kind, const std::string& message) {
  if (message.empty() || !speaks_for_the_job()) return;
  std::string_view program = argv != nullptr && argv[0] != nullptr ? argv[0] : "scaleprobe";
  if (auto slash = program.rfind('/'); slash != std::string_view::npos) program.remove_prefix(slash + 1);
  // One fprintf, so that lines of several processes do not interleave.
  std::fprintf(stderr, "%.*s: %s: %s\n", int(program.size()), program.data(), kind, message.c_str());
}

// Starts this program again, same pid and argv, with OPENBLAS_CORETYPE=core: OpenBLAS reads it in
// its constructor, before main. /proc/self/exe is the file this process runs even if argv[0] is a
// bare name found on PATH or the file was replaced since. Returns only when that is impossible,
// with why.
std::string reexecute(char** argv, const std::string& core, const std::string& detected) {
  if (argv == nullptr || argv[0] == nullptr) return "the program has no argv to start again with";
  // Started as "ld.so program args", /proc/self/exe is the loader, not the program; the kernel then
  // gave the process no interpreter (AT_BASE 0), which a dynamic program otherwise always has.
  if (getauxval(AT_BASE) == 0) return "started through the dynamic loader, /proc/self/exe is not the program";
  setenv(kCoretype, core.c_str(), 1);
  setenv(kDetectedMarker, detected.c_str(), 1);
  std::fflush(nullptr);
  execv("/proc/self/exe", argv);
  const int err = errno;
  unsetenv(kCoretype);
  unsetenv(kDetectedMarker);
  return std::string("execv(/proc/self/exe): ") + std::strerror(err);
}

// execv of /proc/self/exe names the process "exe" (the kernel takes the name from the path it runs),
// which ps, top, pgrep and killall show: the re-executed process takes back the name it started
// under, the base name of argv[0] (the path its launcher ran, in every ordinary start).
void restore_process_name(char** argv) {
  char name[16] = "";
  if (argv == nullptr || argv[0] == nullptr || prctl(PR_GET_NAME, name) != 0 || std::strcmp(name, "exe") != 0) return;
  const char* slash = std::strrchr(argv[0], '/');
  prctl(PR_SET_NAME, slash != nullptr ? slash + 1 : argv[0]);  // the kernel keeps 15 characters
}

}  // namespace

void choose_blas_core(char** argv) {
  const BlasCoreInputs in = live_inputs();
  if (in.detected) restore_process_name(argv);
  BlasCoreDecision d = decide_blas_core(in);
  if (d.reexec) {
    const std::string failure = reexecute(argv, d.core, in.in_use);
    d.reason = "detected by OpenBLAS; scaleprobe chose " + d.core + " but could not start again with it: " + failure;
    d.warning = "OpenBLAS runs its " + in.in_use + " kernels on a CPU with " + in.cpu.names() +
                ", and scaleprobe could not start again with " + d.core + " (" + failure +
                "): set OPENBLAS_CORETYPE=" + d.core + " yourself";
  }
  if (!d.error.empty()) {
    say(argv, "error", d.error);
    std::exit(2);  // before MPI and any thread: nothing to shut down
  }
  say(argv, "warning", d.warning);
  recorded() = BlasCore{openblas_get_corename(), d.reason};
}

const BlasCore& blas_core() {
  if (!recorded()) {
    const BlasCoreDecision d = decide_blas_core(live_inputs());
    recorded() = BlasCore{
        openblas_get_corename(),
        d.reexec ? "detected by OpenBLAS; this program does not choose (it would choose " + d.core + ")" : d.reason};
  }
  return *recorded();
}

void set_blas_threads(int n) { openblas_set_num_threads(n); }

int blas_threads() { return openblas_get_num_threads(); }

std::string blas_config() {
  std::string s = openblas_get_config();
  s += " core=";
  s += openblas_get_corename();
  return s;
}

#else  // generic CBLAS: neither the kernel core nor the thread count is under our control

void choose_blas_core(char**) {}
const BlasCore& blas_core() {
  static const BlasCore core{"unknown", "not OpenBLAS: the BLAS chooses its kernels itself"};
  return core;
}
void set_blas_threads(int) {}
int blas_threads() { return 1; }
std::string blas_config() { return "unknown BLAS"; }

#endif

std::string blas_description() { return blas_config() + " (" + blas_core().reason + ")"; }

}  // namespace sp::kernels
