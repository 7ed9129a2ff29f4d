#include "collectives/transports/node_segment.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

#include "core/run/error.hpp"
#include "core/run/program.hpp"
#include "core/run/sizes.hpp"

namespace sp::coll {
namespace {

constexpr const char* kPrefix = "scaleprobe-shm-";

// The segments of this process, so a buffer's release (a plain function) finds its arena.
std::vector<NodeSegment*>& live_segments() {
  static std::vector<NodeSegment*> v;
  return v;
}

std::string host_name() {
  char h[256] = {};
  gethostname(h, sizeof h - 1);
  std::string s(h);
  for (char& c : s)
    if (c == '/' || c == '-') c = '_';  // '-' separates the name's fields
  return s;
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

std::string NodeSegment::directory() { return "/dev/shm"; }

int node_key() {
  for (const char* var : {"SCALEPROBE_NODE_KEY", "SLURM_NODEID"}) {
    const char* v = std::getenv(var);
    if (!v) continue;
    char* end = nullptr;
    errno = 0;
    const long key = std::strtol(v, &end, 10);
    if (end == v || *end != '\0' || errno != 0 || key < 0 || key > INT32_MAX)
      fail("{}='{}' is not a node number (a non-negative integer)", var, v);
    return static_cast<int>(key);
  }
  return 0;
}

std::vector<std::string> remove_orphaned_segments(const std::string& dir, const std::string& host) {
  std::vector<std::string> removed;
  DIR* d = opendir(dir.c_str());
  if (!d) return removed;
  const std::string mine = kPrefix + host + "-";
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(mine, 0) != 0) continue;
    // scaleprobe-shm-<host>-<pid>-<sequence>
    const std::string rest = name.substr(mine.size());
    char* end = nullptr;
    const long pid = std::strtol(rest.c_str(), &end, 10);
    if (pid <= 0 || *end != '-') continue;
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) continue;  // its creator lives
    if (unlink((dir + "/" + name).c_str()) == 0) removed.push_back(name);
  }
  closedir(d);
  return removed;
}

namespace {

// The ranks of comm on this rank's node: one shared-memory domain, one node key.
MPI_Comm node_comm(MPI_Comm comm) {
  int rank = 0;
  SP_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  std::string key_error;
  int key = 0;
  try {
    key = node_key();
  } catch (const Error& e) {
    key_error = e.what();
  }
  fail_together(comm, key_error, /*usage=*/true);
  MPI_Comm shared = MPI_COMM_NULL, node = MPI_COMM_NULL;
  SP_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
  SP_MPI_CHECK(MPI_Comm_split(shared, key, rank, &node));
  SP_MPI_CHECK(MPI_Comm_free(&shared));
  return node;
}

// The layout of comm's ranks, given this rank's node communicator (node_comm of comm).
NodeLayout layout_over(MPI_Comm comm, MPI_Comm node) {
  int local_rank = 0, local_size = 1;
  SP_MPI_CHECK(MPI_Comm_rank(node, &local_rank));
  SP_MPI_CHECK(MPI_Comm_size(node, &local_size));
  NodeLayout l{local_rank == 0 ? 1 : 0, local_size, local_size};
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &l.nodes, 1, MPI_INT, MPI_SUM, comm));
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &l.fewest, 1, MPI_INT, MPI_MIN, comm));
  SP_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &l.most, 1, MPI_INT, MPI_MAX, comm));
  return l;
}

}  // namespace

NodeLayout node_layout(MPI_Comm comm) {
  MPI_Comm node = node_comm(comm);
  const NodeLayout l = layout_over(comm, node);
  SP_MPI_CHECK(MPI_Comm_free(&node));
  return l;
}

std::unique_ptr<NodeSegment> NodeSegment::create(MPI_Comm comm, std::size_t arena_bytes, MPI_Comm* rail, int channels) {
  if (channels < 1) fail("a node segment needs at least one channel (got {})", channels);
  int size = 1, rank = 0;
  SP_MPI_CHECK(MPI_Comm_size(comm, &size));
  SP_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_Comm node = node_comm(comm);
  std::unique_ptr<NodeSegment> s(new NodeSegment());
  SP_MPI_CHECK(MPI_Comm_rank(node, &s->local_rank_));
  SP_MPI_CHECK(MPI_Comm_size(node, &s->local_size_));
  const NodeLayout layout = layout_over(comm, node);
  std::string layout_error;
  if (!rail && layout.nodes != 1)
    layout_error = fmt::format(
        "the shm allreduce runs within one node: these {} ranks span {} nodes (shared-memory "
        "domains and node keys)",
        size, layout.nodes);
  else if (rail && layout.fewest != layout.most)
    layout_error = fmt::format(
        "the hierarchical allreduce needs the same number of ranks on every node: these {} "
        "ranks span {} nodes of {} to {} ranks",
        size, layout.nodes, layout.fewest, layout.most);
  if (!layout_error.empty()) {
    MPI_Comm_free(&node);
    fail_together(comm, rank == 0 ? layout_error : std::string(), /*usage=*/true);  // the job's layout
  }
  s->arena_bytes_ = (arena_bytes + 4095) / 4096 * 4096;
  s->channels_ = channels;
  s->signals_.assign(std::size_t(channels), 0);
  s->running_.assign(std::size_t(channels), false);
  s->part_bytes_ = s->header_bytes() + std::size_t(channels) * kSlots * kSlotBytes + s->arena_bytes_;
  s->map_bytes_ = s->part_bytes_ * std::size_t(s->local_size_);

  // Local rank 0 creates and reserves; its name (or its error) goes to every local rank.
  static int sequence = 0;
  const std::string dir = directory(), host = host_name();
  char name[200] = {};
  std::string error;
  int fd = -1;
  if (s->local_rank_ == 0) {
    remove_orphaned_segments(dir, host);
    fmt::format_to_n(name, sizeof name - 1, "/{}{}-{}-{}", kPrefix, host, getpid(), sequence++);
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
      error = fmt::format("cannot create the shm allreduce's segment {}{}: {}", dir, name, std::strerror(errno));
    } else if (ftruncate(fd, off_t(s->map_bytes_)) != 0 ||
               (errno = posix_fallocate(fd, 0, off_t(s->map_bytes_))) != 0) {
      const int err = errno;
      struct statvfs st {};
      const std::uint64_t free_bytes = statvfs(dir.c_str(), &st) == 0 ? std::uint64_t(st.f_bavail) * st.f_frsize : 0;
      error = err == ENOSPC
                  ? fmt::format("{} is too small for the shm allreduce's segment: it needs {} ({} ranks x {}), {} free",
                                dir, format_size(s->map_bytes_), s->local_size_, format_size(s->part_bytes_),
                                format_size(free_bytes))
                  : fmt::format("cannot size the shm allreduce's segment {}{}: {}", dir, name, std::strerror(err));
      shm_unlink(name);
    }
  }
  SP_MPI_CHECK(MPI_Bcast(name, sizeof name, MPI_CHAR, 0, node));
  int created = error.empty() ? 1 : 0;
  SP_MPI_CHECK(MPI_Bcast(&created, 1, MPI_INT, 0, node));
  if (created && s->local_rank_ != 0) {
    fd = shm_open(name, O_RDWR, 0);
    if (fd < 0)
      error = fmt::format("cannot open the shm allreduce's segment {}{}: {}", dir, name, std::strerror(errno));
  }
  if (fd >= 0) {
    void* p = mmap(nullptr, s->map_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
      error = fmt::format("cannot map the shm allreduce's segment ({}): {}", format_size(s->map_bytes_),
                          std::strerror(errno));
    else
      s->base_ = static_cast<std::byte*>(p);
  }
  // Every local rank has mapped it (or failed): the name goes, so nothing outlives the job.
  SP_MPI_CHECK(MPI_Barrier(node));
  if (s->local_rank_ == 0 && created) shm_unlink(name);
  MPI_Comm_free(&node);
  fail_together(comm, error);
  if (rail) SP_MPI_CHECK(MPI_Comm_split(comm, s->local_rank_, rank, rail));
  live_segments().push_back(s.get());
  return s;
}

NodeSegment::~NodeSegment() {
  std::erase(live_segments(), this);
  if (base_) munmap(base_, map_bytes_);
}

TransportBuffer NodeSegment::allocate(std::size_t bytes) {
  bytes = std::max<std::size_t>((bytes + 63) / 64 * 64, 64);
  std::size_t at = 0;  // first fit, so every rank making the same calls gets the same offsets
  auto next = used_.begin();
  for (; next != used_.end() && next->first - at < bytes; ++next) at = next->first + next->second;
  if (at + bytes > arena_bytes_)
    fail("the node segment's arena ({} per rank) has no room for {} more ({} in use)", format_size(arena_bytes_),
         format_size(bytes), format_size([&] {
           std::size_t n = 0;
           for (const auto& u : used_) n += u.second;
           return n;
         }()));
  used_.insert(next, {at, bytes});
  std::byte* p = arena(local_rank_) + at;
  std::memset(p, 0, bytes);
  return {p, bytes, &NodeSegment::release};
}

bool NodeSegment::in_arena(const void* p, std::size_t bytes) const {
  const auto* b = static_cast<const std::byte*>(p);
  return b >= arena(local_rank_) && bytes <= arena_bytes_ &&
         b - arena(local_rank_) <= std::ptrdiff_t(arena_bytes_ - bytes);
}

void NodeSegment::release(void* p) noexcept {
  for (NodeSegment* s : live_segments())
    if (s->in_arena(p, 0)) {
      const std::size_t at = std::size_t(static_cast<std::byte*>(p) - s->arena(s->local_rank_));
      std::erase_if(s->used_, [at](const auto& u) { return u.first == at; });
      return;
    }
}

std::uint64_t NodeSegment::begin_run(std::uint64_t n, int channel) {
  if (channel < 0 || channel >= channels_) fail("node segment channel {} of {}", channel, channels_);
  const auto c = std::size_t(channel);
  if (running_[c]) fail("the shm allreduce runs one call at a time per channel of a node segment");
  running_[c] = true;
  const std::uint64_t base = signals_[c];
  signals_[c] += n;
  return base;
}

bool NodeSegment::all_reached(std::uint64_t value, int channel) const {
  for (int r = 0; r < local_size_; ++r)
    if (counter(r, channel).load(std::memory_order_acquire) < value) return false;
  return true;
}

void NodeSegment::wait_all(std::uint64_t value, int channel) const {
  // About 2 us of spinning (a peer on its own core answers well within it), then the core is
  // yielded on every check, so oversubscribed ranks let the peer they wait for run.
  for (int spin = 0; !all_reached(value, channel); ++spin) {
    if (spin < 256)
      cpu_relax();
    else
      sched_yield();
  }
}

}  // namespace sp::coll
