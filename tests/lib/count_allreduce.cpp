// Preloaded into every rank by test_dp_train's counting test (LD_PRELOAD): counts the rank's
// MPI_Allreduce and MPI_Iallreduce calls through MPI's profiling interface (PMPI), and at
// MPI_Finalize writes "<calls> <calls of more than 16 elements>" to $SP_COUNT_DIR/rank<r>.txt. The
// engine's scalars (loss, gradient norm, hashes, stop signal) are 1-2 elements; a gradient
// allreduce is a bucket.
#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {
std::atomic<long> g_calls{0}, g_large{0};
void count(int elements) {
  ++g_calls;
  if (elements > 16) ++g_large;
}
}  // namespace

extern "C" {

int MPI_Allreduce(const void* send, void* recv, int count_, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  count(count_);
  return PMPI_Allreduce(send, recv, count_, type, op, comm);
}

int MPI_Iallreduce(const void* send, void* recv, int count_, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  count(count_);
  return PMPI_Iallreduce(send, recv, count_, type, op, comm, request);
}

int MPI_Finalize() {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (const char* dir = std::getenv("SP_COUNT_DIR")) {
    const std::string path = std::string(dir) + "/rank" + std::to_string(rank) + ".txt";
    if (std::FILE* f = std::fopen(path.c_str(), "w")) {
      std::fprintf(f, "%ld %ld\n", g_calls.load(), g_large.load());
      std::fclose(f);
    }
  }
  return PMPI_Finalize();
}

}  // extern "C"
