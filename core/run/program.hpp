// What every scaleprobe binary's main() shares: MPI start-up and shutdown, command-line parsing
// with one-line errors, and the exit-code convention:
//   0 success, 1 a failed run (wrong result, I/O error), 2 bad usage (flag out of range, ...).
#pragma once
#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "core/run/cli_fwd.hpp"
#include "core/run/error.hpp"

namespace sp {

// Built with SimGrid's smpicxx (the smpi preset): every rank is a simulated process of one
// simulator process, time is the simulated clock, and this machine's own probes mean nothing.
#if defined(SCALEPROBE_SIMULATED)
inline constexpr bool kSimulatedBuild = true;
#else
inline constexpr bool kSimulatedBuild = false;
#endif

// An error every rank raises together (all ranks agreed on it, e.g. through a broadcast), so
// rank 0 alone reports it and no abort is needed. Exit code 1.
struct CollectiveError : Error {
  using Error::Error;
};
// A usage error: every rank sees the same bad input, so rank 0 alone reports it. Exit code 2.
struct UsageError : CollectiveError {
  using CollectiveError::CollectiveError;
};

// Ends the whole job from one rank after its error line was printed: flushes, pauses briefly and
// calls MPI_Abort. The pause: MPICH's launcher (Hydra) kills every process at MPI_Abort and can
// drop output its proxy had not forwarded yet — a job ended with no error line at all (seen in
// CI: program_errors under MPICH).
[[noreturn]] void abort_job(MPI_Comm comm, int code);

// Collective over comm: when any rank passes a non-empty local_error, every rank throws a
// CollectiveError with the lowest such rank's message ("rank r: ..." in a job of several ranks), so
// a set-up step that can fail on some ranks only (a missing GPU) ends the run with one line.
// usage: the error is bad input on the ranks that report it (a UsageError, exit 2).
void fail_together(MPI_Comm comm, const std::string& local_error, bool usage = false);

struct Session {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  int size = 1;
  int thread_level = MPI_THREAD_SINGLE;  // what MPI provided
  std::string program;
  std::vector<std::string> argv;  // the command line as given, for provenance
};

// Runs body inside an MPI session. Catches every exception, prints one line
// "<program>: error: <message>" to stderr (std exceptions in words, see one_line_message:
// std::bad_alloc is "out of memory ...") and turns them into the exit codes above. A local
// failure on one rank (anything but a CollectiveError) in a job of several ranks prints
// "<program>: error: rank <r>: <message>" and aborts the whole job so no rank is left waiting.
int run_program(int argc, char** argv, std::string program, int required_thread_level,
                const std::function<int(Session&)>& body);

// app.parse() with CLI11's multi-line error output turned into a one-line UsageError and --help
// printed on rank 0. Returns false when help was printed (the caller returns 0).
bool parse_command_line(CLI::App& app, const Session& session);
// The same on a CLI::App built here (`description`, the program's name) with the options that
// `add_options` declares on it: a program's main then compiles no CLI11 (core/run/cli_fwd.hpp).
bool parse_command_line(const Session& session, const std::string& description,
                        const std::function<void(CLI::App&)>& add_options);
// "<program> (scaleprobe <version>) git <revision>, <build type> build, <compiler>, baseline ISA <isa>":
// what --version prints (parse_command_line adds --version to every program; trace_check too).
std::string version_text(const std::string& program);

}  // namespace sp
