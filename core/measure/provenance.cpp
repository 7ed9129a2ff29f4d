#include "core/measure/provenance.hpp"

#include <fmt/format.h>
#include <hdf5.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <set>

#include "core/run/binding.hpp"
#include "core/run/build_info.hpp"
#include "core/run/error.hpp"
#include "core/run/program.hpp"
#include "core/run/sizes.hpp"
#include "core/measure/topology.hpp"

extern char** environ;

namespace sp {
namespace {

std::string read_first_line(const char* path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

bool has_prefix(std::string_view s, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](auto p) { return s.starts_with(p); });
}

// Broadcast rank 0's key/value list so every rank writes identical attributes.
void broadcast(KeyValues& kv, MPI_Comm comm) {
  std::string blob;
  for (auto& [k, v] : kv) blob += k + '\0' + v + '\0';
  unsigned long long n = blob.size();
  SP_MPI_CHECK(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm));
  blob.resize(n);
  // Never a broadcast of nothing: SMPI's Open MPI pipeline broadcast divides by zero on one.
  if (n > 0) SP_MPI_CHECK(MPI_Bcast(blob.data(), static_cast<int>(n), MPI_CHAR, 0, comm));
  kv.clear();
  for (std::size_t pos = 0; pos < blob.size();) {
    std::string k(blob.c_str() + pos);
    pos += k.size() + 1;
    std::string v(blob.c_str() + pos);
    pos += v.size() + 1;
    kv.emplace_back(std::move(k), std::move(v));
  }
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, len);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

}  // namespace

const std::string* Provenance::find(const std::string& key) const {
  for (auto& [k, v] : run)
    if (k == key) return &v;
  return nullptr;
}

std::string host_name() {
#if defined(SCALEPROBE_SIMULATED)
  // The simulated host this rank runs on (SMPI: the platform's name for it).
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  SP_MPI_CHECK(MPI_Get_processor_name(name, &len));
  return std::string(name, static_cast<std::size_t>(len));
#else
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) fail("gethostname failed: {}", std::strerror(errno));
  return buf;
#endif
}

std::string simulation_banner() {
  if (!kSimulatedBuild) return "";
  const char* platform = std::getenv("SCALEPROBE_SIM_PLATFORM");
  const char* config = std::getenv("SCALEPROBE_SIM_CONFIG");
  return fmt::format("# SIMULATED (SimGrid SMPI): every time below is simulated. Platform: {}; settings: {}\n",
                     platform ? platform : "not described (run through scripts/simulate)",
                     config ? config : "SMPI's defaults");
}

std::string cpu_model() { return cpu_info_field("model name"); }

std::string cpu_info_field(const std::string& key) {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    if (line.empty()) break;  // first processor only
    std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string k = line.substr(0, colon);
    while (!k.empty() && (k.back() == ' ' || k.back() == '\t')) k.pop_back();
    if (k == key) return colon + 2 <= line.size() ? line.substr(colon + 2) : "";
  }
  return "unknown";
}

std::string cpu_isa_summary() {
  // The instruction-set extensions that decide which kernels run fast (x86 "flags", Arm "Features").
  static const char* notable[] = {"sse4_2",   "avx",         "avx2",        "fma",         "avx512f",  "avx512bw",
                                  "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16",
                                  "amx_int8", "asimd",       "sve",         "sve2",        "bf16",     "i8mm"};
  std::string flags = cpu_info_field("flags");
  if (flags == "unknown") flags = cpu_info_field("Features");
  std::set<std::string> have;
  std::size_t pos = 0;
  while (pos < flags.size()) {
    std::size_t end = flags.find(' ', pos);
    if (end == std::string::npos) end = flags.size();
    have.insert(flags.substr(pos, end - pos));
    pos = end + 1;
  }
  std::string out;
  for (const char* f : notable) {
    if (!have.count(f)) continue;
    if (!out.empty()) out += ' ';  // appended apart: " " + std::string trips GCC 12's -Wrestrict
    out += f;
  }
  return out.empty() ? "none of the listed" : out;
}

std::string load_average() {
  std::string l = read_first_line("/proc/loadavg");
  std::size_t cut = 0;
  for (int i = 0; i < 3 && cut != std::string::npos; ++i) cut = l.find(' ', cut + 1);
  return l.substr(0, cut);
}

std::string cpu_affinity_list() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return "unknown";
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpu_list(cpus);
}

std::string utc_timestamp() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

Provenance collect_provenance(const Session& s) {
  Provenance p;
  std::string cmd;
  for (auto& a : s.argv) cmd += (cmd.empty() ? "" : " ") + a;
  // Host names of all ranks (small; provenance, not samples).
  std::string me = host_name();
  me.resize(255, '\0');
  std::vector<char> all(256 * static_cast<std::size_t>(s.size));
  SP_MPI_CHECK(MPI_Allgather(me.data(), 256, MPI_CHAR, all.data(), 256, MPI_CHAR, s.comm));
  std::set<std::string> hosts;
  for (int r = 0; r < s.size; ++r) hosts.insert(std::string(all.data() + 256 * r));
  std::string host_list;
  for (auto& h : hosts) host_list += (host_list.empty() ? "" : ",") + h;

  unsigned h5maj = 0, h5min = 0, h5rel = 0;
  H5get_libversion(&h5maj, &h5min, &h5rel);
  int mpi_major = 0, mpi_minor = 0;
  MPI_Get_version(&mpi_major, &mpi_minor);

  p.add("program", s.program);
  p.add("command_line", cmd);
  p.add("start_time_utc", utc_timestamp());
  p.add("hostname", host_name());
  p.add("hosts", host_list);
  p.add("nhosts", std::to_string(hosts.size()));
  p.add("nranks", std::to_string(s.size));
  p.add("omp_max_threads", std::to_string(omp_get_max_threads()));
  p.add("online_cpus", std::to_string(sysconf(_SC_NPROCESSORS_ONLN)));
  p.add("cpu_model", cpu_model());
  p.add("cpu_signature", fmt::format("vendor {} family {} model {} stepping {} microcode {}",
                                     cpu_info_field("vendor_id"), cpu_info_field("cpu family"), cpu_info_field("model"),
                                     cpu_info_field("stepping"), cpu_info_field("microcode")));
  p.add("cpu_isa", cpu_isa_summary());
  p.add("cpu_flags", cpu_info_field("flags"));
  const CacheTopology& caches = cache_topology();
  RankCacheShare share = rank_cache_share(s.comm);
  p.add("cache_topology", caches.describe());
  p.add("cpu_counts", machine_counts().describe());
  p.add("memory_bytes", std::to_string(physical_memory_bytes()));
  p.add("last_level_cache_bytes", std::to_string(share.llc_bytes));
  p.add("node_ranks", std::to_string(share.node_ranks));
  p.add("llc_ranks_sharing", std::to_string(share.llc_ranks));
  p.add("rank_cache_share_bytes", std::to_string(share.share_bytes()));
  p.add("mpi_library_version", mpi_library_version());
  p.add("mpi_standard_version", fmt::format("{}.{}", mpi_major, mpi_minor));
  p.add("mpi_thread_level", std::to_string(s.thread_level));
  p.add("hdf5_version", fmt::format("{}.{}.{}", h5maj, h5min, h5rel));
  p.add("fmt_version", std::to_string(FMT_VERSION));
  p.add("compiler", build_info::compiler);
  p.add("cxx_flags", build_info::cxx_flags);
  p.add("build_type", build_info::build_type);
  p.add("isa_baseline", *build_info::isa_baseline ? build_info::isa_baseline : "compiler default");
  p.add("isa_features", build_info::isa_features);
  p.add("git_revision", build_info::git_revision());
  p.add("scaleprobe_version", build_info::version);
  if (kSimulatedBuild) {
    p.add("clock_source", "simulated: SMPI's clock (MPI_Wtime), the platform's time");
    p.add("cpu_clock", "none: simulated processes (cpu columns are 0)");
  } else {
    p.add("clock_source", "std::chrono::steady_clock (CLOCK_MONOTONIC); kernel clocksource " +
                              read_first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource"));
    p.add("cpu_clock", "CLOCK_THREAD_CPUTIME_ID (per thread)");
  }
  p.add("load_average_start", load_average());
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    std::string k(kv.substr(0, eq)), v(kv.substr(eq + 1));
    if (k.starts_with("SLURM_"))
      p.slurm.emplace_back(k, v);
    else if (has_prefix(k, {"OMP_", "OPENBLAS_", "GOTO_", "MKL_", "KMP_", "GOMP_", "ONEDNN_", "DNNL_", "OMPI_",
                            "MPICH_", "I_MPI_", "UCX_", "NCCL_", "GLOO_", "PMIX_RANK", "SCALEPROBE_"}))
      p.env.emplace_back(k, v);
  }
  std::sort(p.slurm.begin(), p.slurm.end());
  std::sort(p.env.begin(), p.env.end());
  broadcast(p.run, s.comm);
  broadcast(p.slurm, s.comm);
  broadcast(p.env, s.comm);
  return p;
}

}  // namespace sp
