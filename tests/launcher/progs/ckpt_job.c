/* ckpt_job.c - a BSP job for bsprun's restart tests and the checkpoint benchmark.
 *
 *   ckpt_job STEPS EVERY [--ms MS] [--mib M] [--abort-at S] [--exit-at S] [--segv-at S]
 *            [--no-memory-at S]
 *
 * Runs STEPS supersteps and ends every EVERYth with bspg_checkpoint (the others with bsp_sync).
 * In each superstep every process mixes what reached it at the last sync (one word put into
 * `inbox` by its left neighbour, one message from its right neighbour) into its persisted state,
 * then puts a word to its right and sends one to its left. The answer ("RESULT <hash> after S
 * steps", printed by pid 0) changes if any superstep is lost, done twice or restored wrongly.
 *   --ms MS       sleep MS milliseconds in every superstep (so that a test can act mid-run)
 *   --mib M       persist M MiB more per process (checkpoint cost; part of the answer too)
 *   --abort-at S  the last process calls bsp_abort in superstep S (every run)
 *   --exit-at S   the last process calls exit(3) in superstep S (every run)
 *   --segv-at S   the last process raises SIGSEGV in superstep S (every run)
 *   --no-memory-at S  from superstep S on, the last process's main thread is refused new
 *                 in-memory files (memfd_create fails with ENOMEM, through a seccomp filter), as
 *                 where memory ran out (first run only: not in a run that resumed)
 * Every process prints "pid P of N on HOST" first. Process 0 prints "checkpoint C at step S took
 * T s" after each checkpoint, and on a resumed run "resumed from checkpoint C at step S (read in
 * T s, at E)" where E is the wall clock (seconds since 1970) when bspg_resume returned. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bspg.h"

#define STATE_WORDS 512

static double now_s(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* memfd_create fails with ENOMEM in this thread from now on. */
static void refuse_memory_files(void) {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_memfd_create, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOMEM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {(unsigned short)(sizeof filter / sizeof filter[0]), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)
    bsp_abort("ckpt_job: could not install the seccomp filter (errno %d)\n", errno);
}

static long option(int argc, char **argv, const char *name, long otherwise) {
  for (int i = 3; i + 1 < argc; ++i)
    if (strcmp(argv[i], name) == 0) return atol(argv[i + 1]);
  return otherwise;
}

int main(int argc, char **argv) {
  if (argc < 3 || atol(argv[1]) < 1 || atol(argv[2]) < 1) {
    fprintf(stderr,
            "usage: ckpt_job STEPS EVERY [--ms MS] [--mib M] [--abort-at S] [--exit-at S] "
            "[--segv-at S] [--no-memory-at S]\n");
    return 2;
  }
  const long steps = atol(argv[1]), every = atol(argv[2]);
  const long ms = option(argc, argv, "--ms", 0), mib = option(argc, argv, "--mib", 0);
  const long abort_at = option(argc, argv, "--abort-at", -1),
             exit_at = option(argc, argv, "--exit-at", -1);
  const long segv_at = option(argc, argv, "--segv-at", -1),
             no_memory_at = option(argc, argv, "--no-memory-at", -1);

  bsp_begin(bsp_nprocs());
  const int p = bsp_nprocs(), me = bsp_pid();
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  printf("pid %d of %d on %s\n", me, p, host);
  fflush(stdout);

  uint64_t state[STATE_WORDS], inbox = 0, gathered[1024];
  long step = 0;
  const size_t extra_bytes = (size_t)mib << 20;
  unsigned char *extra = malloc(extra_bytes ? extra_bytes : 1);
  if (!extra) bsp_abort("ckpt_job: cannot allocate %ld MiB\n", mib);
  bsp_push_reg(&inbox, (int)sizeof inbox);
  bsp_push_reg(gathered, (int)sizeof gathered);
  bsp_sync();
  bspg_persist(state, sizeof state);
  bspg_persist(&inbox, sizeof inbox);
  bspg_persist(&step, sizeof step);
  bspg_persist(extra, extra_bytes);

  const double resume_began = now_s(CLOCK_MONOTONIC);
  const int from = bspg_resume();
  if (from == 0) {
    for (int i = 0; i < STATE_WORDS; ++i)
      state[i] = 0x9E3779B97F4A7C15ull * (uint64_t)(me + 1) + (uint64_t)i;
    for (size_t i = 0; i < extra_bytes; ++i) extra[i] = (unsigned char)(i * 7 + (size_t)me);
  } else if (me == 0) {
    printf("resumed from checkpoint %d at step %ld (read in %.3f s, at %.3f)\n", from, step,
           now_s(CLOCK_MONOTONIC) - resume_began, now_s(CLOCK_REALTIME));
  }

  const int right = (me + 1) % p, left = (me + p - 1) % p;
  while (step < steps) {
    /* Fold in what the last sync delivered. */
    state[step % STATE_WORDS] ^= inbox * 0xD6E8FEB86659FD93ull;
    int n = 0, bytes = 0;
    bsp_qsize(&n, &bytes);
    if (n != (step == 0 ? 0 : 1))
      bsp_abort("ckpt_job: process %d has %d messages in step %ld\n", me, n, step);
    for (; n > 0; --n) {
      uint64_t word = 0;
      bsp_move(&word, (int)sizeof word);
      state[(step * 3 + 1) % STATE_WORDS] += word | 1;
    }
    /* This superstep's work. */
    uint64_t carry = (uint64_t)step + 1;
    for (int i = 0; i < STATE_WORDS; ++i) {
      state[i] = (state[i] ^ carry) * 0xBF58476D1CE4E5B9ull + (uint64_t)me;
      carry = state[i] >> 17;
    }
    if (extra_bytes) extra[((size_t)step * 4099) % extra_bytes] ^= (unsigned char)carry;
    bsp_put(right, &state[(step + 5) % STATE_WORDS], &inbox, 0, (int)sizeof inbox);
    bsp_send(left, NULL, &state[(step + 9) % STATE_WORDS], (int)sizeof(uint64_t));
    ++step;
    if (me == p - 1 && step == abort_at)
      bsp_abort("ckpt_job: process %d aborts at step %ld\n", me, step);
    if (me == p - 1 && step == exit_at) {
      fflush(stdout);
      exit(3);
    }
    if (me == p - 1 && step == segv_at) raise(SIGSEGV);
    if (me == p - 1 && step == no_memory_at && from == 0) refuse_memory_files();
    if (ms > 0) usleep((useconds_t)ms * 1000);
    if (step % every == 0) {
      const double began = now_s(CLOCK_MONOTONIC);
      const int c = bspg_checkpoint();
      if (me == 0) {
        printf("checkpoint %d at step %ld took %.4f s\n", c, step, now_s(CLOCK_MONOTONIC) - began);
        fflush(stdout);
      }
    } else {
      bsp_sync();
    }
  }

  /* The answer: every process's state and extra bytes, gathered on pid 0. */
  uint64_t hash = 1469598103934665603ull;
  for (int i = 0; i < STATE_WORDS; ++i) hash = (hash ^ state[i]) * 1099511628211ull;
  for (size_t i = 0; i < extra_bytes; i += 64) hash = (hash ^ extra[i]) * 1099511628211ull;
  if (p > 1024) bsp_abort("ckpt_job: at most 1024 processes\n");
  bsp_put(0, &hash, gathered, me * (int)sizeof hash, (int)sizeof hash);
  bsp_sync();
  if (me == 0) {
    uint64_t all = 0;
    for (int q = 0; q < p; ++q) all = all * 1000003ull + gathered[q];
    printf("RESULT %llu after %ld steps\n", (unsigned long long)all, step);
  }
  bsp_pop_reg(gathered);
  bsp_pop_reg(&inbox);
  bsp_end();
  free(extra);
  return 0;
}
