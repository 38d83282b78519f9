/* buddy_transfer MIB OFFSET [REPEAT] - the network part of a checkpoint's limit, in plain MPI:
 * every process sends MIB MiB from memory to its buddy (rank + OFFSET) and receives as much
 * from its ward (rank - OFFSET), as bspg_checkpoint sends a shard's copy; rank 0 prints the
 * slowest process's time of each repetition ("transfer S s"). benchmarks/ckpt_restart.sh runs it.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (argc < 3) {
    if (rank == 0) fprintf(stderr, "usage: buddy_transfer MIB OFFSET [REPEAT]\n");
    MPI_Finalize();
    return 2;
  }
  const long mib = atol(argv[1]), offset = atol(argv[2]), repeat = argc > 3 ? atol(argv[3]) : 1;
  const size_t bytes = (size_t)mib << 20,
               chunk = (size_t)8 << 20; /* as the library: 8 MiB messages */
  char *out = malloc(bytes ? bytes : 1), *in = malloc(bytes ? bytes : 1);
  if (!out || !in) MPI_Abort(MPI_COMM_WORLD, 1);
  memset(out, rank, bytes);
  const int to = (int)((rank + offset) % p), from = (int)((rank - offset % p + p) % p);
  for (long r = 0; r < repeat; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double began = MPI_Wtime();
    for (size_t at = 0; at < bytes; at += chunk) {
      const int n = (int)(bytes - at < chunk ? bytes - at : chunk);
      MPI_Sendrecv(out + at, n, MPI_BYTE, to, 0, in + at, n, MPI_BYTE, from, 0, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
    }
    double took = MPI_Wtime() - began, slowest = 0;
    MPI_Reduce(&took, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("transfer %.4f s\n", slowest);
  }
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
