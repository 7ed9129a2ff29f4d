#include "core/trace/h5_open.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "core/run/error.hpp"
#include "core/trace/file_digest.hpp"
#include "core/trace/h5_memory_file.hpp"
#include "core/run/sizes.hpp"

namespace sp {
namespace {

IsolationSettings& settings() {
  static IsolationSettings s;
  return s;
}

// The core driver treats two open files with the same name as one (H5FD_core_cmp): each image
// gets a name of its own.
std::string image_name() {
  static std::atomic<unsigned long> counter{0};
  return fmt::format("scaleprobe image {} {}", ::getpid(), counter++);
}

herr_t copy_attribute(hid_t src, const char* name, const H5A_info_t*, void* dst_ptr) {
  const hid_t dst = *static_cast<hid_t*>(dst_ptr);
  h5::Attribute a(H5Aopen(src, name, H5P_DEFAULT));
  if (a.get() < 0) return -1;
  h5::Datatype file_type(H5Aget_type(a));
  h5::Dataspace space(H5Aget_space(a));
  if (file_type.get() < 0 || space.get() < 0) return -1;
  h5::Datatype mem_type(H5Tget_native_type(file_type, H5T_DIR_ASCEND));
  const hssize_t points = H5Sget_simple_extent_npoints(space);
  if (mem_type.get() < 0 || points < 0) return -1;
  std::vector<unsigned char> buf(static_cast<std::size_t>(points) * H5Tget_size(mem_type) + 1);
  if (H5Aread(a, mem_type, buf.data()) < 0) return -1;
  h5::Attribute b(H5Acreate2(dst, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT));
  const bool ok = b.get() >= 0 && H5Awrite(b, mem_type, buf.data()) >= 0;
  const bool vlen_string = H5Tget_class(mem_type) == H5T_STRING && H5Tis_variable_str(mem_type) > 0;
  if (vlen_string || H5Tdetect_class(mem_type, H5T_VLEN) > 0) H5Dvlen_reclaim(mem_type, space, H5P_DEFAULT, buf.data());
  return ok ? 0 : -1;
}

void write_all(int fd, const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(3);  // the parent is gone
    p += n, size -= static_cast<std::size_t>(n);
  }
}

// The isolated read: never returns. Answers 'I' + a digested image, or 'E' + one error line.
[[noreturn]] void child_read(int fd, std::span<const unsigned char> bytes, const FullRead& full_read,
                             const IsolationLimits& limits) {
  if (settings().child_start) settings().child_start();
  // A crash is the child's signal, whatever handlers the program (or a sanitizer) installed.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM}) ::signal(sig, SIG_DFL);
  // What the child would print itself (a library's message, a sanitizer's report of a failed
  // allocation) must not break the one line the parent prints for the file.
  if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) {
    ::dup2(null, STDERR_FILENO);
    ::close(null);
  }
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);  // and leaves no core file behind
  ::alarm(limits.seconds);
  std::uint64_t budget = limits.memory_bytes ? limits.memory_bytes : physical_memory_bytes() / 2;
  if (budget == 0) budget = std::uint64_t{4} << 30;
  unsigned long long pages = 0;  // the address space already mapped (an MPI program maps much)
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%llu", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) == 0) {
    const rlim_t want = pages * static_cast<unsigned long long>(::sysconf(_SC_PAGESIZE)) + budget;
    if (as.rlim_max == RLIM_INFINITY || want < as.rlim_max) as.rlim_cur = want;
    ::setrlimit(RLIMIT_AS, &as);
  }
  std::string error;
  try {
    std::vector<unsigned char> image;
    {
      h5::File f = open_h5_image(bytes);
      full_read(f);
      image = rewrite_digested_image(f);
      f.close("close the file");
    }
    write_all(fd, "I", 1);
    write_all(fd, image.data(), image.size());
    ::_exit(0);
  } catch (const std::bad_alloc&) {
    error = fmt::format("unreadable: reading it needs more than {} MiB of memory (corrupt?)", budget >> 20);
  } catch (const std::exception& e) {
    error = one_line_message(e);
  } catch (...) {
    error = unknown_exception_message();
  }
  write_all(fd, "E", 1);
  write_all(fd, error.data(), error.size());
  ::_exit(1);
}

OpenedH5 read_isolated(std::span<const unsigned char> bytes, const FullRead& full_read, const IsolationLimits& limits) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) fail("cannot start the isolated read: {}", std::strerror(errno));
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(fds[0]), ::close(fds[1]);
    fail("cannot start the isolated read: {}", std::strerror(e));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_read(fds[1], bytes, full_read, limits);
  }
  ::close(fds[1]);
  std::vector<unsigned char> answer;
  unsigned char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.insert(answer.end(), buf, buf + n);
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (sig == SIGALRM) fail("unreadable: the HDF5 library did not finish reading it in {} s", limits.seconds);
    fail("unreadable: the HDF5 library crashed on it (signal {}, {})", sig, ::strsignal(sig));
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (!answer.empty() && answer[0] == 'E' && code == 1) fail("{}", std::string(answer.begin() + 1, answer.end()));
  if (answer.empty() || answer[0] != 'I' || code != 0)
    fail("unreadable: the isolated read of it ended with exit status {} and no answer", code);
  const std::span<const unsigned char> image = std::span(answer).subspan(1);
  if (verify_image_digest(image) != FileDigest::verified) fail("unreadable: the isolated read sent an undigested copy");
  return {open_h5_image(image), false};
}

}  // namespace

std::vector<unsigned char> read_whole_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open: {}", std::strerror(errno));
  std::vector<unsigned char> out;
  unsigned char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      fail("cannot read: {}", std::strerror(e));
    }
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
  }
  ::close(fd);
  return out;
}

h5::File open_h5_image(std::span<const unsigned char> bytes) {
  h5::quiet_errors();
  if (bytes.empty()) fail("not a readable HDF5 file (empty)");
  h5::PropertyList fapl(h5::check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"));
  h5::check_status(H5Pset_fapl_core(fapl, std::size_t{1} << 20, /*backing_store=*/false), "H5Pset_fapl_core");
  h5::check_status(H5Pset_file_image(fapl, const_cast<unsigned char*>(bytes.data()), bytes.size()),
                   "H5Pset_file_image");
  h5::File f(H5Fopen(image_name().c_str(), H5F_ACC_RDONLY, fapl));
  if (f.get() < 0) fail("not a readable HDF5 file (corrupt or truncated)");
  return f;
}

std::vector<unsigned char> rewrite_digested_image(hid_t src) {
  h5::PropertyList fapl(h5::check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"));
  h5::check_status(H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST), "H5Pset_libver_bounds");
  h5::PropertyList fcpl = digest_file_creation();
  // The root's link and attribute creation order as the source's (readers list in that order).
  h5::PropertyList source(h5::check(H5Fget_create_plist(src), "H5Fget_create_plist"));
  unsigned links = 0, attributes = 0;
  if (H5Pget_link_creation_order(source, &links) >= 0 && links != 0)
    h5::check_status(H5Pset_link_creation_order(fcpl, links), "H5Pset_link_creation_order");
  if (H5Pget_attr_creation_order(source, &attributes) >= 0 && attributes != 0)
    h5::check_status(H5Pset_attr_creation_order(fcpl, attributes), "H5Pset_attr_creation_order");
  h5::MemoryFile m = h5::build_memory_file(fcpl, fapl, [&](hid_t dst) {
    hsize_t idx = 0;
    if (H5Aiterate2(src, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, copy_attribute, &dst) < 0 &&
        (idx = 0, H5Aiterate2(src, H5_INDEX_NAME, H5_ITER_INC, &idx, copy_attribute, &dst) < 0))
      fail("cannot copy the root attributes");
    for (const std::string& name : h5::child_names(src))
      h5::check_status(H5Ocopy(src, name.c_str(), dst, name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
                       ("copy /" + name).c_str());
  });
  stamp_image_digest(m.bytes());
  return {m.bytes().begin(), m.bytes().end()};
}

void configure_isolated_reads(const IsolationSettings& s) { settings() = s; }

OpenedH5 open_h5_for_reading(const std::filesystem::path& path, const FullRead& full_read) {
  const std::vector<unsigned char> bytes = read_whole_file(path);
  if (verify_image_digest(bytes) == FileDigest::verified) {  // before libhdf5 sees a byte
    h5::File f = open_h5_image(bytes);
    return {std::move(f), true};
  }
  return read_isolated(bytes, full_read, settings().limits);
}

h5::File open_h5_in_process_for_tests(const std::filesystem::path& path) {
  return open_h5_image(read_whole_file(path));
}

}  // namespace sp
