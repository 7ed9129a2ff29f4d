#include "core/run/program.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>

#include "core/run/build_info.hpp"
#include "core/run/log.hpp"

namespace sp {

namespace {
// A failure on this rank alone (any exception but a CollectiveError: a local I/O error, out of
// memory, ...). Alone in the job it is an ordinary failed run (exit 1); with other ranks they may
// be waiting in a collective for this one, so the message names the rank and the job is aborted
// rather than left hanging.
int report_local_failure(const Session& s, const std::string& message) {
  if (s.size == 1) {
    std::fprintf(stderr, "%s: error: %s\n", s.program.c_str(), message.c_str());
    return 1;
  }
  std::fprintf(stderr, "%s: error: rank %d: %s\n", s.program.c_str(), s.rank, message.c_str());
  abort_job(s.comm, 1);
}
}  // namespace

void abort_job(MPI_Comm comm, int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  MPI_Abort(comm, code);
  std::_Exit(code);  // MPI_Abort does not return; if it did, the job must still end
}

int run_program(int argc, char** argv, std::string program, int required_thread_level,
                const std::function<int(Session&)>& body) {
  Session s;
  s.program = std::move(program);
  s.argv.assign(argv, argv + argc);
  if (MPI_Init_thread(&argc, &argv, required_thread_level, &s.thread_level) != MPI_SUCCESS) {
    std::fprintf(stderr, "%s: error: MPI_Init_thread failed\n", s.program.c_str());
    return 1;
  }
  // Errors come back as return codes, so SP_MPI_CHECK can name the failing call before aborting.
  MPI_Comm_set_errhandler(s.comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(s.comm, &s.rank);
  MPI_Comm_size(s.comm, &s.size);
  log::set_rank(s.rank, s.size);
  int rc = 0;
  try {
    if (s.thread_level < required_thread_level)
      fail("MPI provides thread level {} but {} is needed", s.thread_level, required_thread_level);
    rc = body(s);
  } catch (const CollectiveError& e) {
    if (s.rank == 0) std::fprintf(stderr, "%s: error: %s\n", s.program.c_str(), one_line_message(e).c_str());
    rc = dynamic_cast<const UsageError*>(&e) ? 2 : 1;
  } catch (const std::exception& e) {
    rc = report_local_failure(s, one_line_message(e));
  } catch (...) {
    rc = report_local_failure(s, unknown_exception_message());
  }
  if (rc != 0 && s.size == 1) {
    // A failed write can leave HDF5 with a file object whose close failed; HDF5 1.10 then crashes
    // when MPI_Finalize runs its library shutdown (H5F__close_cb). Alone in the job, nothing
    // waits for this rank: end here with the one error line already printed.
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(rc);
  }
  MPI_Finalize();
  return rc;
}

void fail_together(MPI_Comm comm, const std::string& local_error, bool usage) {
  int rank = 0, size = 1;
  SP_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  SP_MPI_CHECK(MPI_Comm_size(comm, &size));
  int first = local_error.empty() ? size : rank;
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first == size) return;
  std::string message = rank == first ? local_error : std::string();
  unsigned long long n = message.size();
  SP_MPI_CHECK(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, first, comm));
  message.resize(n);
  SP_MPI_CHECK(MPI_Bcast(message.data(), static_cast<int>(n), MPI_CHAR, first, comm));
  if (size > 1) message = fmt::format("rank {}: {}", first, message);
  if (usage) throw UsageError(message);
  throw CollectiveError(message);
}

bool parse_command_line(const Session& session, const std::string& description,
                        const std::function<void(CLI::App&)>& add_options) {
  CLI::App app{description, session.program};
  add_options(app);
  return parse_command_line(app, session);
}

std::string version_text(const std::string& program) {
  return fmt::format("{} (scaleprobe {}) git {}, {} build, {}, baseline ISA {}", program, build_info::version,
                     build_info::git_revision(), build_info::build_type, build_info::compiler,
                     *build_info::isa_baseline ? build_info::isa_baseline : "compiler default");
}

bool parse_command_line(CLI::App& app, const Session& session) {
  std::vector<std::string> args(session.argv.rbegin(), session.argv.rend() - 1);  // CLI11 wants reversed
  app.set_version_flag("--version", version_text(session.program), "print the version and build, then exit");
  try {
    app.parse(args);
  } catch (const CLI::CallForVersion&) {
    if (session.rank == 0) std::puts(version_text(session.program).c_str());
    return false;
  } catch (const CLI::CallForHelp&) {
    if (session.rank == 0) std::fputs(app.help().c_str(), stdout);
    return false;
  } catch (const CLI::CallForAllHelp&) {
    if (session.rank == 0) std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
    return false;
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  return true;
}

}  // namespace sp
