// Transport's defaults (transport.hpp): host memory, blocking waits, no nonblocking or library
// call beyond the allreduce the transport itself provides.
#include "collectives/transports/transport.hpp"

#include <algorithm>
#include <cstring>
#include <cstdint>
#include <new>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/run/error.hpp"

namespace sp::coll {

TransportBuffer Transport::allocate(std::size_t bytes) const {
  void* p = ::operator new (std::max<std::size_t>(bytes, 1), std::align_val_t{64});
  std::memset(p, 0, bytes);
  return TransportBuffer(p, bytes, [](void* q) noexcept { ::operator delete (q, std::align_val_t{64}); });
}

void Transport::copy(void* dst, const void* src, std::size_t bytes) const {
  if (bytes) std::memcpy(dst, src, bytes);
}

void Transport::stream_copy(void* dst, const void* src, std::size_t bytes) const {
  if (bytes == 0) return;
#if defined(__SSE2__)
  // The unaligned head and the tail go through memcpy; the body as 16-byte non-temporal stores,
  // four per 64-byte line so that each line leaves the write-combining buffer whole.
  auto* to = static_cast<std::byte*>(dst);
  const auto* from = static_cast<const std::byte*>(src);
  const std::size_t head = std::min(bytes, (64 - reinterpret_cast<std::uintptr_t>(to) % 64) % 64);
  std::memcpy(to, from, head);
  std::size_t done = head;
  for (; done + 64 <= bytes; done += 64)
    for (std::size_t k = 0; k < 64; k += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(to + done + k),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + done + k)));
  _mm_sfence();  // non-temporal stores are weakly ordered: make them visible before a later signal
  std::memcpy(to + done, from + done, bytes - done);
#else
  copy(dst, src, bytes);
#endif
}

std::size_t Transport::count_mismatches(const void* got, const void* want, std::size_t count, Dtype d) const {
  return coll::count_mismatches(got, want, count, d);
}

bool Transport::test(Request& r) {
  if (!r.pending()) return true;
  fail("the {} transport cannot test a request (it cannot advance a schedule without blocking)", name());
}

std::size_t Transport::wait_any(std::span<Request* const> requests) {
  if (requests.empty()) fail("wait_any on no request");
  wait(*requests.front());
  return 0;
}

Request Transport::post_library_allreduce(const void*, void*, std::size_t, Dtype, Op) {
  fail("the {} transport has no nonblocking allreduce", name());
}

void Transport::library_collective(const CollectiveCall& c, const void*, void*, Dtype, Op) {
  fail("the {} transport has no library {} (run it on --backend mpi)", name(), info(c.collective).name);
}

Request Transport::post_library_collective(const CollectiveCall& c, const void*, void*, Dtype, Op) {
  fail("the {} transport has no nonblocking library {}", name(), info(c.collective).name);
}

}  // namespace sp::coll
