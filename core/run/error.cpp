#include "core/run/error.hpp"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <new>
#include <system_error>
#include <typeinfo>
#include <variant>

namespace sp {

namespace {
std::string fold_lines(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}
}  // namespace

std::string one_line_message(const std::exception& e) {
  const std::string what = fold_lines(e.what());
  if (dynamic_cast<const Error*>(&e)) return what;
  // Most specific first: bad_array_new_length is a bad_alloc, filesystem_error a system_error.
  if (dynamic_cast<const std::bad_array_new_length*>(&e)) return "size too large to allocate (" + what + ")";
  if (dynamic_cast<const std::bad_alloc*>(&e)) return "out of memory (" + what + ")";
  if (dynamic_cast<const std::bad_variant_access*>(&e)) return "unexpected data type (" + what + ")";
  if (dynamic_cast<const std::length_error*>(&e)) return "size too large: " + what;
  if (dynamic_cast<const std::out_of_range*>(&e)) return "value out of range: " + what;
  if (dynamic_cast<const std::invalid_argument*>(&e)) return "invalid value: " + what;
  if (dynamic_cast<const std::overflow_error*>(&e) || dynamic_cast<const std::underflow_error*>(&e) ||
      dynamic_cast<const std::range_error*>(&e))
    return "arithmetic overflow: " + what;
  if (dynamic_cast<const std::filesystem::filesystem_error*>(&e)) return what;  // names the paths
  if (dynamic_cast<const std::system_error*>(&e)) return "system error: " + what;
  if (dynamic_cast<const std::runtime_error*>(&e)) return what;
  return fmt::format("unexpected error ({}): {}", typeid(e).name(), what);
}

void mpi_check_failed(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  throw Error(fmt::format("MPI call {} failed at {}:{}: {}", call, file, line, std::string(text, len)));
}

std::string file_system_cause(const std::string& path, int saved_errno) {
  switch (saved_errno) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
    case EROFS:
    case EIO:
      return std::strerror(saved_errno);
    default:
      break;
  }
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  struct statvfs fs {};
  if (statvfs(dir.c_str(), &fs) == 0 && fs.f_bavail == 0) return "No space left on device (0 bytes free)";
  return "";
}

}  // namespace sp
