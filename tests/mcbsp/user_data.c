/* user_data.c - bsp_init_with_user_data (MulticoreBSP): main makes the job description and names
 * the SPMD function with a pointer to it; every process other than 0 runs spmd(pointer) with the
 * description its own run of main made, process 0 calls spmd itself. Every process checks that it
 * got its own pointer and the description (P and n from argv); all send n * (pid + 1) to process
 * 0, which stores the sum in the description for main to check after spmd returns. Process 0
 * prints "PASS user_data P=<processes>".
 *   user_data P N */
#include <mcbsp.h>
#include <stdio.h>
#include <stdlib.h>

struct job {
  unsigned int P; /* processes wanted */
  size_t n;
  size_t sum;          /* process 0: sum over pids of n * (pid + 1) */
  unsigned int nprocs; /* process 0: processes the section had */
};

static struct job *made_by_main; /* this process's description */

#define CHECK(cond, ...)                                                 \
  do {                                                                   \
    if (!(cond)) {                                                       \
      printf("FAIL: process %u, line %d: ", bsp_pid(), __LINE__);        \
      printf(__VA_ARGS__);                                               \
      printf("\n");                                                      \
      fflush(stdout);                                                    \
      bsp_abort("user_data: a check failed on process %u\n", bsp_pid()); \
    }                                                                    \
  } while (0)

static void spmd(void *data) {
  struct job *job = data;
  bsp_begin(job->P);
  CHECK(job == made_by_main, "spmd got %p, not this process's description %p", data,
        (void *)made_by_main);
  CHECK(job->n == 1000, "the description says n = %zu, not 1000", job->n);
  const size_t part = job->n * (bsp_pid() + 1);
  bsp_send(0, NULL, &part, sizeof part);
  bsp_sync();
  if (bsp_pid() == 0) {
    size_t status = 0, sum = 0;
    for (bsp_get_tag(&status, NULL); status != SIZE_MAX; bsp_get_tag(&status, NULL)) {
      size_t got = 0;
      bsp_move(&got, sizeof got);
      sum += got;
    }
    job->sum = sum;
    job->nprocs = bsp_nprocs();
  }
  bsp_end();
}

int main(int argc, char **argv) {
  struct job job = {0, 0, 0, 0};
  job.P = argc > 1 ? (unsigned int)atoi(argv[1]) : bsp_nprocs();
  job.n = argc > 2 ? (size_t)atol(argv[2]) : 0;
  made_by_main = &job;
  bsp_init_with_user_data(spmd, argc, argv, &job);
  spmd(&job);
  const size_t P = job.nprocs;
  if (P != job.P || job.sum != job.n * P * (P + 1) / 2) {
    printf("FAIL: %u processes (wanted %u), sum %zu, not %zu\n", job.nprocs, job.P, job.sum,
           job.n * P * (P + 1) / 2);
    return 1;
  }
  printf("PASS user_data P=%u\n", job.nprocs);
  return 0;
}
