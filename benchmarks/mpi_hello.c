/* mpi_hello.c - the plain MPI program the start-up benchmarks (slurm_startup.sh, wan_sites.sh
 * --startup) time beside bsprun's: start, one reduction, end. */
#include <mpi.h>

int main(int argc, char **argv) {
  int one = 1, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
