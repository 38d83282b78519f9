/* ULFM exploration 3: can a process that waits outside MPI (bspg's shared-memory reduction spins
 * on memory words) learn of a lost peer cheaply? Each survivor polls MPI_Iprobe(MPI_ANY_SOURCE) on
 * the communicator every POLL_US microseconds (as an idle wait would) and reports how long after
 * the kill it saw the error, and what one poll costs. */
#include <mpi.h>
#ifdef OPEN_MPI
#include <mpi-ext.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int poll_us = argc > 1 ? atoi(argv[1]) : 1000;
  double kill_time = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  /* Everyone learns when the victim dies: it sends its clock first (one machine: one clock). */
  if (rank == size - 1) {
    usleep(200000);
    double now = MPI_Wtime();
    for (int r = 0; r < size - 1; ++r) MPI_Send(&now, 1, MPI_DOUBLE, r, 1, MPI_COMM_WORLD);
    raise(SIGKILL);
  }
  MPI_Recv(&kill_time, 1, MPI_DOUBLE, size - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  long polls = 0;
  double spent = 0;
  const int mode = argc > 2 ? atoi(argv[2]) : 0; /* 0 Iprobe, 1 a posted Irecv tested */
  int dummy;
  MPI_Request pending = MPI_REQUEST_NULL;
  if (mode == 1) MPI_Irecv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &pending);
  for (;;) {
    int flag = 0;
    double t = MPI_Wtime();
    int rc = mode == 1 ? MPI_Test(&pending, &flag, MPI_STATUS_IGNORE)
                       : MPI_Iprobe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    spent += MPI_Wtime() - t;
    ++polls;
    if (rc != MPI_SUCCESS) {
      int cls;
      MPI_Error_class(rc, &cls);
      printf("[%d] Iprobe error class %d (PROC_FAILED %d, PENDING %d) %.1f ms after the kill; "
             "%ld polls, %.2f us each\n", rank, cls, MPIX_ERR_PROC_FAILED,
             MPIX_ERR_PROC_FAILED_PENDING, (MPI_Wtime() - kill_time) * 1e3, polls,
             spent / polls * 1e6);
      break;
    }
    if (MPI_Wtime() - kill_time > 10) { printf("[%d] nothing seen in 10 s\n", rank); break; }
    usleep(poll_us);
  }
  MPI_Finalize();
  return 0;
}
