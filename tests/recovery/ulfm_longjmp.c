/* ULFM exploration 2: the recovery shape bspg would use. P working ranks + K spares. An error
 * handler on the working communicator revokes it and longjmps to the recovery point; there all
 * living ranks (spares included) shrink MPI_COMM_WORLD, the spares take the lost ranks' numbers,
 * and the work resumes from the last "checkpoint" (a counter every rank keeps). Kills: ranks named
 * in KILL=r1:s1,r2:s2 (rank r dies at step s). Prints the recovery times and checks the sum. */
#include <mpi.h>
#ifdef OPEN_MPI
#include <mpi-ext.h>
#endif
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static jmp_buf recovery_point;
static MPI_Comm work = MPI_COMM_NULL;
static int wrank, wsize, nspares, nwork;
static double t_fail;

static void on_error(MPI_Comm *comm, int *code, ...) {
  (void)code;
  t_fail = MPI_Wtime();
  MPIX_Comm_revoke(*comm);
  longjmp(recovery_point, 1);
}

/* Which working rank (0..nwork-1) this world rank has, given the living world ranks in order. */
static int kill_step(int rank_in_work) {
  const char *k = getenv("KILL");
  while (k && *k) {
    int r, s;
    if (sscanf(k, "%d:%d", &r, &s) == 2 && r == rank_in_work) return s;
    k = strchr(k, ',');
    if (k) ++k;
  }
  return -1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  nspares = argc > 1 ? atoi(argv[1]) : 1;
  nwork = wsize - nspares;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Errhandler handler;
  MPI_Comm_create_errhandler(on_error, &handler);

  /* The role of every world rank: its working rank, or -1 for a spare. Kept the same everywhere. */
  int *role = malloc(sizeof(int) * wsize);
  for (int r = 0; r < wsize; ++r) role[r] = r < nwork ? r : -1;
  MPI_Comm world = MPI_COMM_WORLD;
  long checkpoint_step = 0, checkpoint_sum = 0; /* the in-memory checkpoint */
  int recoveries = 0;
  int myrole = role[wrank];

  if (setjmp(recovery_point)) {
  recover:;
    /* Everyone alive gets here: workers from the handler, spares from their wait. */
    double t0 = MPI_Wtime();
    MPIX_Comm_revoke(world);
    MPI_Comm alive;
    MPIX_Comm_shrink(world, &alive);
    MPI_Comm_set_errhandler(alive, MPI_ERRORS_RETURN);
    /* Who is left: each says its old role; lost roles go to spares in order. */
    int n; MPI_Comm_size(alive, &n);
    int *roles = malloc(sizeof(int) * n);
    MPI_Allgather(&myrole, 1, MPI_INT, roles, 1, MPI_INT, alive);
    int *taken = calloc(nwork, sizeof(int));
    for (int i = 0; i < n; ++i) if (roles[i] >= 0) taken[roles[i]] = 1;
    int next_lost = 0, me; MPI_Comm_rank(alive, &me);
    for (int i = 0; i < n; ++i) {
      if (roles[i] >= 0) continue;
      while (next_lost < nwork && taken[next_lost]) ++next_lost;
      if (next_lost == nwork) break;
      taken[next_lost] = 1;
      if (i == me) myrole = next_lost;
      ++next_lost;
    }
    int lost_left = 0;
    for (int r = 0; r < nwork; ++r) lost_left += !taken[r];
    free(roles); free(taken);
    if (lost_left) { if (me == 0) printf("not enough spares\n"); MPI_Abort(alive, 3); }
    if (work != MPI_COMM_NULL) MPI_Comm_free(&work);
    if (world != MPI_COMM_WORLD) MPI_Comm_free(&world);
    world = alive;
    /* Checkpoint: the survivors' state is the same everywhere; the spare gets it from rank 0 of
     * the working ranks (in bspg: its shard from a copy holder). */
    long ck[2] = {checkpoint_step, checkpoint_sum};
    int root_world = -1, mine0 = myrole == 0 ? me : -1;
    MPI_Allreduce(&mine0, &root_world, 1, MPI_INT, MPI_MAX, world);
    MPI_Bcast(ck, 2, MPI_LONG, root_world, world);
    checkpoint_step = ck[0]; checkpoint_sum = ck[1];
    ++recoveries;
    if (myrole == 0) printf("recovery %d: %.1f ms after the error (found %.1f ms)\n", recoveries,
                            (MPI_Wtime() - t0) * 1e3, (MPI_Wtime() - t_fail) * 1e3);
  }
  /* The working communicator: roles >= 0, ordered by role; spares (role -1) wait on world. */
  MPI_Comm_split(world, myrole >= 0 ? 0 : MPI_UNDEFINED, myrole, &work);
  if (myrole < 0) {
    int dummy;
    MPI_Recv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, 99, world, MPI_STATUS_IGNORE);
    /* Only a failure ends this wait (or the end message, tag 99, from role 0). */
    if (dummy == 1) { MPI_Finalize(); return 0; }
    goto recover;
  }
  MPI_Comm_set_errhandler(work, handler);
  long sum = checkpoint_sum;
  for (long step = checkpoint_step; step < 200; ++step) {
    /* Only the rank that started with the role dies (a spare that took it over does not). */
    if (wrank == myrole && step == kill_step(myrole)) raise(SIGKILL);
    long x = myrole + step, y;
    MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, work);
    sum += y;
    if (step % 20 == 19) { checkpoint_step = step + 1; checkpoint_sum = sum; }
    usleep(2000);
  }
  long expect = 0;
  for (long step = 0; step < 200; ++step) expect += (long)nwork * (nwork - 1) / 2 + (long)nwork * step;
  if (myrole == 0) {
    printf("%s sum %ld (expected %ld) after %d recoveries\n", sum == expect ? "PASS" : "FAIL", sum, expect, recoveries);
    int n; MPI_Comm_size(world, &n);
    int me; MPI_Comm_rank(world, &me);
    for (int r = 0; r < n; ++r) if (r != me) { int one = 1; MPI_Send(&one, 1, MPI_INT, r, 99, world); }
  } else {
    /* Working ranks other than 0 do not need the end message: but spares do, and they are the
     * only receivers of tag 99. Workers other than 0 would get one too: drain it. */
    int dummy; MPI_Recv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, 99, world, MPI_STATUS_IGNORE);
  }
  MPI_Comm_free(&work);
  MPI_Finalize();
  return 0;
}
