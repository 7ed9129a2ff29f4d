// Error type and checking macros shared by every scaleprobe binary.
// A user-facing problem (bad flag, corrupt trace, wrong result) is a sp::Error whose message is
// one line; main() prints it once and exits non-zero.
#pragma once
#include <mpi.h>

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace sp {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

// Turns an MPI error code into an sp::Error naming the call site.
void mpi_check_failed(int code, const char* call, const char* file, int line);

}  // namespace sp

#define SP_MPI_CHECK(call)                                                   \
  do {                                                                       \
    int sp_mpi_rc_ = (call);                                                 \
    if (sp_mpi_rc_ != MPI_SUCCESS) ::sp::mpi_check_failed(sp_mpi_rc_, #call, __FILE__, __LINE__); \
  } while (0)
