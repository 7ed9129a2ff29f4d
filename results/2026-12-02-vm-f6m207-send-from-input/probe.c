// The first probe of this folder (README): MPI_Allgather of 1 MiB on 2 ranks beside a copy of the
// own block + MPI_Sendrecv sending either that fresh copy or the source buffer. mpicc -O2 probe.c
// -o probe && mpirun -np 2 --bind-to core ./probe   (3 repetitions of 2000 calls each)
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  size_t n = 1 << 20, half = n / 2;
  char* s = aligned_alloc(64, half);
  char* d = aligned_alloc(64, n);
  memset(s, r + 1, half);
  memset(d, 0, n);
  int peer = 1 - r, it = 2000;
  for (int rep = 0; rep < 3; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < it; ++i) MPI_Allgather(s, half, MPI_BYTE, d, half, MPI_BYTE, MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    for (int i = 0; i < it; ++i) {
      memcpy(d + r * half, s, half);
      MPI_Sendrecv(d + r * half, half, MPI_BYTE, peer, 7, d + peer * half, half, MPI_BYTE, peer, 7, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
    }
    double t3 = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    double t4 = MPI_Wtime();
    for (int i = 0; i < it; ++i) {
      memcpy(d + r * half, s, half);
      MPI_Sendrecv(s, half, MPI_BYTE, peer, 7, d + peer * half, half, MPI_BYTE, peer, 7, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
    }
    double t5 = MPI_Wtime();
    if (r == 0)
      printf("allgather %.1f us  copy+sendrecv(from recv) %.1f us  copy+sendrecv(from send) %.1f us\n",
             (t1 - t0) / it * 1e6, (t3 - t2) / it * 1e6, (t5 - t4) / it * 1e6);
  }
  MPI_Finalize();
}
