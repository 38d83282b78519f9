/* buddy_transfer MIB OFFSET [REPEAT [COPIES]] - a checkpoint's limit, in plain MPI and memcpy.
 * Each repetition, all processes at once: the memory part, a memcpy of MIB MiB into memory written
 * before (as an in-memory checkpoint keeps its own copy), and the network part, MIB MiB sent from
 * memory to each of COPIES (1 unless given) holders (rank + c * OFFSET, c = 1..COPIES) while as
 * much arrives from each ward (rank - c * OFFSET), as bspg_checkpoint sends a shard's copies.
 * Rank 0 prints the slowest process's time of each part ("memcpy S s", "transfer S s").
 * benchmarks/ckpt_restart.sh and recovery_in_place.sh run it.
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
    if (rank == 0) fprintf(stderr, "usage: buddy_transfer MIB OFFSET [REPEAT [COPIES]]\n");
    MPI_Finalize();
    return 2;
  }
  const long mib = atol(argv[1]), offset = atol(argv[2]), repeat = argc > 3 ? atol(argv[3]) : 1,
             copies = argc > 4 ? atol(argv[4]) : 1;
  if (mib < 0 || offset < 1 || repeat < 1 || copies < 1 || copies > 32 || copies * offset >= p) {
    if (rank == 0)
      fprintf(stderr,
              "buddy_transfer: need MIB >= 0, REPEAT >= 1, COPIES <= 32 and 1 <= COPIES * OFFSET "
              "< %d\n",
              p);
    MPI_Finalize();
    return 2;
  }
  const size_t bytes = (size_t)mib << 20,
               chunk = (size_t)8 << 20; /* as the library: 8 MiB messages */
  char *out = malloc(bytes ? bytes : 1), *in = malloc(bytes ? bytes * (size_t)copies : 1),
       *kept = malloc(bytes ? bytes : 1);
  if (!out || !in || !kept) MPI_Abort(MPI_COMM_WORLD, 1);
  memset(out, rank, bytes);
  memset(in, 0, bytes * (size_t)copies);
  memset(kept, 0, bytes);
  /* Called through a volatile pointer: a copy nobody reads must not be left out by the compiler. */
  void *(*volatile copy)(void *, const void *, size_t) = memcpy;
  MPI_Request requests[64];
  MPI_Status statuses[64]; /* not MPI_STATUSES_IGNORE: GCC 12 misreads MPICH's as an empty array */
  for (long r = 0; r < repeat; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    double began = MPI_Wtime();
    copy(kept, out, bytes);
    double copied = MPI_Wtime() - began, slowest_copy = 0;
    MPI_Reduce(&copied, &slowest_copy, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("memcpy %.4f s\n", slowest_copy);
    MPI_Barrier(MPI_COMM_WORLD);
    began = MPI_Wtime();
    for (size_t at = 0; at < bytes; at += chunk) {
      const int n = (int)(bytes - at < chunk ? bytes - at : chunk);
      /* Every holder's copy from the one shard, each ward's into a buffer of its own. */
      for (long c = 1; c <= copies; ++c) {
        const int to = (int)((rank + c * offset) % p), from = (int)((rank - c * offset + p) % p);
        MPI_Irecv(in + (size_t)(c - 1) * bytes + at, n, MPI_BYTE, from, 0, MPI_COMM_WORLD,
                  &requests[2 * (c - 1)]);
        MPI_Isend(out + at, n, MPI_BYTE, to, 0, MPI_COMM_WORLD, &requests[2 * (c - 1) + 1]);
      }
      MPI_Waitall((int)(2 * copies), requests, statuses);
    }
    double took = MPI_Wtime() - began, slowest = 0;
    MPI_Reduce(&took, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("transfer %.4f s\n", slowest);
  }
  free(out);
  free(in);
  free(kept);
  MPI_Finalize();
  return 0;
}
