// Run provenance: everything needed to say where, how and by what a result was produced.
// Collected on every rank and made identical (rank 0's view) so it can be written collectively.
#pragma once
#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

namespace sp {

struct Session;

using KeyValues = std::vector<std::pair<std::string, std::string>>;

struct Provenance {
  KeyValues run;    // program, command line, hosts, ranks, threads, versions, build, git, clocks, load
  KeyValues slurm;  // every SLURM_* environment variable
  KeyValues env;    // variables that change kernels (OMP_*, OPENBLAS_*, GOTO_*, MKL_*, KMP_*, GOMP_*,
                  // ONEDNN_*, DNNL_*) or the transport (OMPI_*, MPICH_*, I_MPI_*, UCX_*, NCCL_*, GLOO_*), SCALEPROBE_*
  void add(std::string key, std::string value) { run.emplace_back(std::move(key), std::move(value)); }
  const std::string* find(const std::string& key) const;
};

// Collective: gathers host names, reads versions, environment and load. extra entries
// (e.g. a benchmark's measured memory bandwidth) can be appended by the caller afterwards.
Provenance collect_provenance(const Session& session);

// Facts about this machine used by the harness as well as recorded.
std::string host_name();
// "# SIMULATED ...\n" naming the platform and SMPI's settings (scripts/simulate puts them in the
// environment) in the simulated build, "" otherwise: the first header line of every program's table.
std::string simulation_banner();
std::string cpu_model();
std::string cpu_info_field(const std::string& key);  // first processor's /proc/cpuinfo field, or "unknown"
std::string cpu_isa_summary();                       // notable ISA extensions present, e.g. "avx2 fma avx512f"
std::string load_average();                          // the first three fields of /proc/loadavg
std::string cpu_affinity_list();                     // cores this thread may run on, e.g. "0-1"
std::string utc_timestamp();                         // ISO 8601

}  // namespace sp
