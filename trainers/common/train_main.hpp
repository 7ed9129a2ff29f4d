// The main() of a trainer program (gpt_train, resnet_train). The options are declared and parsed in
// the programs' option files: the mains compile no CLI11 (core/run/cli_fwd.hpp).
#pragma once

#include "core/run/program.hpp"
#include "kernels/blas.hpp"
#include "trainers/dp/stop_signals.hpp"

namespace sp::train {

// A trainer program's main: the BLAS kernel core for this CPU (which may start the program again,
// so before MPI and any thread), the stop signals taken off every later thread (so before MPI
// too: dp/stop_signals.hpp), then inside an MPI session, its Options registered by add_options
// on a command line described by `description`, parsed (--help prints and exits 0), then
// run(s, o).
template <typename Options>
int train_main(int argc, char** argv, const char* program, const char* description,
               void (*add_options)(CLI::App&, Options&), int (*run)(Session&, Options&)) {
  kernels::choose_blas_core(argv);
  dp::listen_for_stop_signals();
  return run_program(argc, argv, program, MPI_THREAD_SERIALIZED, [&](Session& s) {
    Options o;
    if (!parse_command_line(s, description, [&](CLI::App& app) { add_options(app, o); })) return 0;
    return run(s, o);
  });
}

}  // namespace sp::train
