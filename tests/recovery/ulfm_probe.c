/* ULFM exploration: P working ranks + 1 spare; a rank dies; survivors revoke, shrink, and the spare
 * takes the dead rank's number. Prints the time of each step. */
#include <mpi.h>
#ifdef OPEN_MPI
#include <mpi-ext.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double t0;
static int wrank;
#define SAY(...) do { printf("[%d %.3f] ", wrank, MPI_Wtime() - t0); printf(__VA_ARGS__); printf("\n"); fflush(stdout); } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int victim = argc > 1 ? atoi(argv[1]) : 2;
  const int mode = argc > 2 ? atoi(argv[2]) : 0; /* 0 kill, 1 stop */
  const int spare = size - 1;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  /* The working group: everyone but the spare. */
  MPI_Comm work;
  MPI_Comm_split(MPI_COMM_WORLD, wrank == spare ? 1 : 0, wrank, &work);
  MPI_Comm_set_errhandler(work, MPI_ERRORS_RETURN);
  MPI_Win win = MPI_WIN_NULL, swin = MPI_WIN_NULL;
  double *base = NULL;
  if (wrank != spare) {
    MPI_Win_allocate(1 << 20, 1, MPI_INFO_NULL, work, &base, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  int rc = MPI_SUCCESS;
  if (wrank == spare) {
    /* The spare waits on world for the survivors' call. */
    int dummy;
    rc = MPI_Recv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    SAY("spare: recv returned %d", rc);
  } else {
    for (int step = 0; step < 50; ++step) {
      if (wrank == victim && step == 10) {
        SAY("victim: %s", mode ? "SIGSTOP" : "SIGKILL");
        raise(mode ? SIGSTOP : SIGKILL);
      }
      double x = 1, y;
      if (getenv("RMA")) {
        int wsz; MPI_Comm_size(work, &wsz);
        if (step == 0) MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        for (int t = 0; t < wsz; ++t) MPI_Put(&x, 1, MPI_DOUBLE, t, 0, 1, MPI_DOUBLE, win);
        rc = MPI_Win_flush_all(win);
        if (rc == MPI_SUCCESS) rc = MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, work);
      } else
      rc = MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, work);
      if (rc != MPI_SUCCESS) {
        int cls; MPI_Error_class(rc, &cls);
        SAY("allreduce at step %d failed: class %d (PROC_FAILED %d, REVOKED %d)", step, cls, MPIX_ERR_PROC_FAILED, MPIX_ERR_REVOKED);
        break;
      }
      usleep(10000);
    }
    MPIX_Comm_revoke(work);
    MPIX_Comm_revoke(MPI_COMM_WORLD);
    SAY("revoked");
  }
  /* Everyone alive: shrink world. */
  MPI_Comm alive;
  rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &alive);
  int asz; MPI_Comm_size(alive, &asz);
  SAY("shrink rc %d, %d alive", rc, asz);
  /* The new working group: survivors keep their numbers, the spare takes the victim's. */
  int key = wrank == spare ? victim : wrank;
  MPI_Comm fresh;
  rc = MPI_Comm_split(alive, 0, key, &fresh);
  int frank; MPI_Comm_rank(fresh, &frank);
  SAY("split rc %d: now %d", rc, frank);
  /* The old window: can it be freed? */
  if (win != MPI_WIN_NULL) {
    double s = MPI_Wtime();
    if (getenv("RMA")) MPI_Win_unlock_all(win);
    rc = MPI_Win_free(&win);
    SAY("old window free rc %d after %.3f s", rc, MPI_Wtime() - s);
  }
  double *b2; MPI_Win w2;
  rc = MPI_Win_allocate(1 << 20, 1, MPI_INFO_NULL, fresh, &b2, &w2);
  SAY("new window rc %d", rc);
  double one = frank, sum;
  MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, fresh);
  SAY("sum of ranks %g", sum);
  MPI_Win_free(&w2);
  MPI_Finalize();
  return 0;
}
