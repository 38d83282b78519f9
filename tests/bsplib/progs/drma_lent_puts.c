/* Large bsp_puts whose pages bspg may lend to the receiver instead of copying them at the call
 * (BSPG_LEND_PUTS, bsp(3)): whatever the program does to the source between bsp_put and
 * bsp_sync, what arrives is the source as it was at the call, and what the program did to the
 * source stays. Sizes from 256 KiB to 16 MiB at several alignments, partial pages, a source
 * overwritten or freed right after the put, read() into it, the same source put twice, a source
 * that is a registered area a get reads and a put writes in the same superstep, a shared mapping
 * and a stack array as sources, bsp_hpput.
 * Argument "lent": where this process may use userfaultfd (lending's condition besides
 * process_vm_readv, which the job has on one machine), a page-aligned source must be seen lent
 * (its pages away, mincore) right after the put. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bsptest.h"

static unsigned char value_at(int from, int round, size_t i) {
  return (unsigned char)(from * 37 + round * 11 + (int)(i % 251));
}

static void fill(unsigned char *to, size_t n, int from, int round) {
  for (size_t i = 0; i < n; ++i) to[i] = value_at(from, round, i);
}

static void check(const unsigned char *got, size_t n, int from, int round, const char *what) {
  for (size_t i = 0; i < n; ++i)
    if (got[i] != value_at(from, round, i))
      EXPECT_INT(got[i], value_at(from, round, i), "%s: byte %zu of %zu from process %d", what, i,
                 n, from);
}

static int may_use_userfaultfd(void) {
  long fd = syscall(SYS_userfaultfd, O_CLOEXEC);
  if (fd < 0) return 0;
  close((int)fd);
  return 1;
}

static int resident(const void *at) {
  unsigned char in = 0;
  EXPECT(mincore((void *)((uintptr_t)at & ~(uintptr_t)4095), 4096, &in) == 0, "mincore failed");
  return in & 1;
}

#define MIB (1u << 20)

int main(int argc, char **argv) {
  const int expect_lent = argc > 1 && strcmp(argv[1], "lent") == 0 && may_use_userfaultfd();
  test_begin(bsp_nprocs());
  const int p = bsp_nprocs(), me = bsp_pid();
  const int right = (me + 1) % p, left = (me + p - 1) % p;
  const size_t area_bytes = 16 * MIB + 3 * 4096;
  unsigned char *area = test_alloc(area_bytes); /* what arrives */
  bsp_push_reg(area, (int)area_bytes);
  unsigned char *shared_src = test_alloc(2 * MIB); /* a source others get from */
  bsp_push_reg(shared_src, (int)(2 * MIB));
  bsp_sync();
  int round = 0;

  /* Every size and alignment: put to the right, source overwritten right after the put on odd
   * rounds, left alone on even ones (then it must be as it was after the sync). */
  const size_t sizes[] = {256u << 10, (256u << 10) + 1, MIB - 3, MIB, 4 * MIB + 5, 16 * MIB};
  const size_t source_offsets[] = {0, 1, 7, 4093};
  const size_t dest_offsets[] = {0, 4, 4096 + 12};
  unsigned char *buffer = test_alloc(16 * MIB + 2 * 4096);
  unsigned char *aligned = (unsigned char *)(((uintptr_t)buffer + 4095) & ~(uintptr_t)4095);
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s)
    for (size_t o = 0; o < sizeof source_offsets / sizeof *source_offsets; ++o) {
      const size_t n = sizes[s], at = source_offsets[o], into = dest_offsets[(s + o) % 3];
      if (n > 4 * MIB && o > 1) continue; /* the largest at two alignments are enough */
      ++round;
      unsigned char *src = aligned + at;
      fill(src, n, me, round);
      bsp_put(right, src, area, (int)into, (int)n);
      if (expect_lent && at == 0 && p > 1)
        EXPECT(!resident(src + 4096), "a page-aligned source of %zu bytes was not lent", n);
      const int overwrite = round % 2;
      if (overwrite) memset(src, 0xee, n);
      bsp_sync();
      check(area + into, n, left, round, "a put");
      if (overwrite) {
        for (size_t i = 0; i < n; ++i)
          if (src[i] != 0xee) EXPECT_INT(src[i], 0xee, "overwritten source byte %zu of %zu", i, n);
      } else {
        check(src, n, me, round, "the source after the sync");
      }
    }

  /* A source freed before the sync (a block of its own: glibc unmaps it), and one read() into
   * after the put: the kernel writes it. */
  ++round;
  unsigned char *doomed = test_alloc(3 * MIB);
  fill(doomed, 3 * MIB, me, round);
  bsp_put(right, doomed, area, 0, (int)(3 * MIB));
  memset(doomed, 0, 3 * MIB);
  free(doomed);
  bsp_sync();
  check(area, 3 * MIB, left, round, "a put whose source was freed before the sync");

  ++round;
  fill(aligned, 2 * MIB, me, round);
  bsp_put(right, aligned, area, 0, (int)(2 * MIB));
  {
    int pipes[2];
    EXPECT(pipe(pipes) == 0, "pipe failed");
    unsigned char note[4000];
    memset(note, 0x5a, sizeof note);
    EXPECT(write(pipes[1], note, sizeof note) == (ssize_t)sizeof note, "write to a pipe failed");
    ssize_t got = read(pipes[0], aligned + 4096 + 10, sizeof note);
    EXPECT(got == (ssize_t)sizeof note, "read() into a put's source returned %zd (errno %d)", got,
           got < 0 ? errno : 0);
    close(pipes[0]);
    close(pipes[1]);
  }
  bsp_sync();
  check(area, 2 * MIB, left, round, "a put whose source read() wrote into");
  for (size_t i = 4096 + 10; i < 4096 + 10 + 4000; ++i)
    EXPECT_INT(aligned[i], 0x5a, "byte %zu that read() wrote into the source", i);

  /* The same source put twice: to both neighbours, and twice to the right at two places. */
  ++round;
  fill(aligned, MIB, me, round);
  bsp_put(right, aligned, area, 0, (int)MIB);
  bsp_put(left, aligned, area, (int)(2 * MIB), (int)MIB);
  bsp_put(right, aligned, area, (int)(4 * MIB), (int)MIB);
  bsp_sync();
  check(area, MIB, left, round, "the first of three puts of one source");
  check(area + 2 * MIB, MIB, right, round, "the second of three puts of one source");
  check(area + 4 * MIB, MIB, left, round, "the third of three puts of one source");
  check(aligned, MIB, me, round, "a source put three times, after the sync");

  /* A registered source: put to the right, read by the left neighbour's get and written by its
   * put in the same superstep. The get sees the area as the superstep ended (before any put
   * lands), the put to the right carries it as at the call, and the left's put lands after. */
  ++round;
  fill(shared_src, 2 * MIB, me, round);
  bsp_sync();
  bsp_put(right, shared_src, area, 0, (int)(2 * MIB));
  bsp_get(right, shared_src, 0, area + 8 * MIB, (int)(2 * MIB));
  unsigned char *patch = test_alloc(MIB);
  fill(patch, MIB, me, round + 1000);
  bsp_put(right, patch, shared_src, (int)(512u << 10), (int)MIB);
  bsp_sync();
  check(area, 2 * MIB, left, round, "a put of a registered source that others read and wrote");
  check(area + 8 * MIB, 2 * MIB, right, round, "a get of an area that was also a put's source");
  check(shared_src, 512u << 10, me, round, "the registered source below the put into it");
  check(shared_src + (512u << 10), MIB, left, round + 1000, "the put into a put's source");
  free(patch);

  /* The same with MPI's one-sided transfers: the left neighbour's bsp_hpput of 1.5 MiB (from
   * 1 MiB on, straight into registered memory) writes into the lent source, and its bsp_get of
   * 1 MiB into unregistered memory (straight from the registered area) reads it. */
  ++round;
  fill(shared_src, 2 * MIB, me, round);
  bsp_sync();
  bsp_put(right, shared_src, area, 0, (int)(2 * MIB));
  unsigned char *fetched = test_alloc(MIB);
  bsp_get(right, shared_src, (int)MIB, fetched, (int)MIB);
  unsigned char *direct = test_alloc(3 * MIB / 2);
  fill(direct, 3 * MIB / 2, me, round + 2000);
  bsp_hpput(right, direct, shared_src, 0, (int)(3 * MIB / 2));
  bsp_sync();
  check(area, 2 * MIB, left, round, "a put of a registered source that an hpput wrote into");
  for (size_t i = 0; i < MIB; ++i)
    if (fetched[i] != value_at(right, round, i + MIB))
      EXPECT_INT(fetched[i], value_at(right, round, i + MIB), "direct get byte %zu", i);
  check(shared_src, 3 * MIB / 2, left, round + 2000, "an hpput into a lent source");
  free(fetched);
  free(direct);

  /* A shared mapping and a stack array as sources (not lendable: copied), overwritten. */
  ++round;
  unsigned char *mapped =
      mmap(NULL, 2 * MIB, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  EXPECT(mapped != MAP_FAILED, "mmap failed");
  fill(mapped, 2 * MIB, me, round);
  bsp_put(right, mapped, area, 0, (int)(2 * MIB));
  memset(mapped, 1, 2 * MIB);
  {
    unsigned char stack[512 * 1024];
    fill(stack, sizeof stack, me, round + 1);
    bsp_put(right, stack, area, (int)(4 * MIB), (int)sizeof stack);
    memset(stack, 2, sizeof stack);
    bsp_sync();
    EXPECT_INT(stack[100], 2, "the stack source after the sync");
  }
  check(area, 2 * MIB, left, round, "a put from a shared mapping");
  check(area + 4 * MIB, 512u << 10, left, round + 1, "a put from the stack");
  munmap(mapped, 2 * MIB);

  /* bsp_hpput: the source stays as it is until the sync. */
  ++round;
  fill(aligned + 3, 3 * MIB, me, round);
  bsp_hpput(right, aligned + 3, area, 8, (int)(3 * MIB));
  bsp_sync();
  check(area + 8, 3 * MIB, left, round, "a bsp_hpput");

  /* A bsp_hpput of 2 MiB (read where it lies) from a registered area into which the left
   * neighbour puts in the same superstep: what arrives is the area before any put landed. */
  ++round;
  fill(shared_src, 2 * MIB, me, round);
  bsp_sync();
  bsp_hpput(right, shared_src, area, 0, (int)(2 * MIB));
  unsigned char *into_source = test_alloc(MIB);
  fill(into_source, MIB, me, round + 3000);
  bsp_put(right, into_source, shared_src, (int)(MIB / 2), (int)MIB);
  bsp_sync();
  check(area, 2 * MIB, left, round, "a bsp_hpput whose source a put wrote at the same sync");
  check(shared_src + MIB / 2, MIB, left, round + 3000, "the put into a bsp_hpput's source");
  free(into_source);

  /* Many supersteps lending one buffer: nothing builds up (each round's check reads it all). */
  for (int k = 0; k < 40; ++k) {
    ++round;
    fill(aligned, MIB, me, round);
    bsp_put(right, aligned, area, 0, (int)MIB);
    if (k % 3 == 0) aligned[MIB / 2] = 9;
    bsp_sync();
    check(area, MIB, left, round, "a put in a series");
  }

  bsp_pop_reg(shared_src);
  bsp_pop_reg(area);
  bsp_sync();
  free(buffer);
  free(shared_src);
  free(area);
  test_end();
  printf("PASS drma_lent_puts\n");
  return 0;
}
