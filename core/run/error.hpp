// Error type and checking macros shared by every scaleprobe binary.
// A user-facing problem (bad flag, corrupt trace, wrong result) is a sp::Error whose message is
// one line; main() prints it once and exits non-zero.
#pragma once
#include <mpi.h>

#include <fmt/format.h>

#include <exception>
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

// The one-line message for any exception: an sp::Error's own text, and for the standard library's
// exceptions what went wrong in words ("out of memory (std::bad_alloc)", "size too large: ...",
// ...), newlines folded, so every binary prints "<program>: error: <message>".
std::string one_line_message(const std::exception& e);
// Why writing below `path` failed, as far as the file system says: the text of errno when it is a
// file-system condition (no space, quota, file too large, read-only, I/O error), else "no space
// left on device" when the file system has no free block; empty when neither tells. HDF5 reports a
// failed write without the cause, so writers add this to their one-line error.
std::string file_system_cause(const std::string& path, int saved_errno);
// The same for an exception that is not a std::exception (catch (...)).
inline std::string unknown_exception_message() { return "unexpected exception of unknown type"; }

// Turns an MPI error code into an sp::Error naming the call site.
void mpi_check_failed(int code, const char* call, const char* file, int line);

}  // namespace sp

#define SP_MPI_CHECK(call)                                                                        \
  do {                                                                                            \
    int sp_mpi_rc_ = (call);                                                                      \
    if (sp_mpi_rc_ != MPI_SUCCESS) ::sp::mpi_check_failed(sp_mpi_rc_, #call, __FILE__, __LINE__); \
  } while (0)
