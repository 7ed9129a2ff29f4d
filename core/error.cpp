#include "error.hpp"

namespace sp {

void mpi_check_failed(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  throw Error(fmt::format("MPI call {} failed at {}:{}: {}", call, file, line, std::string(text, len)));
}

}  // namespace sp
