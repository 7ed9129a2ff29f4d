#include "program.hpp"

#include <cstdio>
#include <exception>

#include "log.hpp"

namespace sp {

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
    if (s.rank == 0) std::fprintf(stderr, "%s: error: %s\n", s.program.c_str(), e.what());
    rc = dynamic_cast<const UsageError*>(&e) ? 2 : 1;
  } catch (const std::exception& e) {
    if (s.size == 1) {
      std::fprintf(stderr, "%s: error: %s\n", s.program.c_str(), e.what());
      rc = 1;
    } else {
      std::fprintf(stderr, "%s: error: rank %d: %s\n", s.program.c_str(), s.rank, e.what());
      std::fflush(stderr);
      MPI_Abort(s.comm, 1);
    }
  }
  MPI_Finalize();
  return rc;
}

bool parse_command_line(CLI::App& app, const Session& session) {
  std::vector<std::string> args(session.argv.rbegin(), session.argv.rend() - 1);  // CLI11 wants reversed
  try {
    app.parse(args);
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
