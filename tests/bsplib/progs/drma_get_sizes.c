/* bsp_get of every size class, from other processes (other subjobs, where the test gives the
 * processes subjobs) and from itself, in supersteps that also put to the memory the gets read
 * and write, send messages, and ask one source several times: a word, 8 KiB, 64 KiB (where large
 * gets may take another way) and 1 MiB, into unregistered and registered memory. Gets read the
 * source as it was when the superstep ended; where a get result and a put land on the same
 * memory, the put wins. Then supersteps where only some processes get, or nobody does. */
#include "bsptest.h"

enum { kSourceWords = (1 << 20) / 8 + 64, kOffset = 8, kOwnPut = 108 };

static long long value(int step, int pid, long i) {
  return (long long)step * 1000000000000LL + (long long)pid * 100000000LL + i;
}

static long long put_value(int step, int pid, long i) { return -value(step, pid, i) - 1; }

int main(void) {
  test_begin(bsp_nprocs());
  const int p = bsp_nprocs(), me = bsp_pid();
  const int right = (me + 1) % p, left = (me + p - 1) % p;
  long long *src = test_alloc(kSourceWords * sizeof *src);
  long long *got = test_alloc(kSourceWords * sizeof *got);    /* not registered */
  long long *reg = test_alloc(kSourceWords * sizeof *reg);    /* registered: gets and puts */
  long long *own = test_alloc(kSourceWords * sizeof *own);    /* from itself */
  long long *each = test_alloc((size_t)p * 4 * sizeof *each); /* a piece from every process */
  long long pieces[16], puts[64];
  bsp_push_reg(src, kSourceWords * (int)sizeof *src);
  bsp_push_reg(reg, kSourceWords * (int)sizeof *reg);
  int tag_bytes = (int)sizeof(int);
  bsp_set_tagsize(&tag_bytes);
  bsp_sync();

  const long sizes[] = {1, 1024, 8192, 8192 + 3, (1 << 20) / 8}; /* words */
  const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
  int step = 0;
  for (int k = 0; k < nsizes; ++k) {
    const long n = sizes[k];
    ++step;
    for (long i = 0; i < kSourceWords; ++i) src[i] = value(step, me, i);
    for (long i = 0; i < kSourceWords; ++i) got[i] = own[i] = reg[i] = -7;
    for (int i = 0; i < 16; ++i) pieces[i] = -7;
    for (long i = 0; i < (long)p * 4; ++i) each[i] = -7;
    bsp_sync();

    /* Puts first, to the very words the right neighbour is read at and to this process's own
     * source: the gets still see the values from before the superstep. */
    const int nput = n < 64 ? (int)n : 64;
    for (int i = 0; i < nput; ++i) puts[i] = put_value(step, me, i);
    bsp_put(right, puts, src, kOffset * (int)sizeof *src, nput * (int)sizeof *src);
    bsp_put(me, puts, src, kOwnPut * (int)sizeof *src, nput * (int)sizeof *src);
    /* The size under test: from the right neighbour into unregistered memory, from itself, and
     * from the left neighbour into registered memory that the left neighbour also puts to. */
    bsp_get(right, src, kOffset * (int)sizeof *src, got, (int)(n * (long)sizeof *src));
    bsp_get(me, src, kOffset * (int)sizeof *src, own, (int)(n * (long)sizeof *src));
    bsp_get(left, src, 0, reg, (int)(n * (long)sizeof *src));
    bsp_put(right, puts, reg, 0, 2 * (int)sizeof *reg); /* the right neighbour's reg[0..2) */
    /* Several gets from one source: pieces apart, and single words in a row (merged). */
    bsp_get(right, src, 0, &pieces[0], 4 * (int)sizeof *src);
    bsp_get(right, src, 100 * (int)sizeof *src, &pieces[4], 2 * (int)sizeof *src);
    for (int i = 0; i < 8; ++i)
      bsp_get(right, src, (20 + i) * (int)sizeof *src, &pieces[6 + i], (int)sizeof *src);
    /* A word from every process, and a message to the left neighbour. */
    for (int q = 0; q < p; ++q) bsp_get(q, src, (4 + me) * (int)sizeof *src, &each[q * 4], 8);
    bsp_send(left, &step, &me, (int)sizeof me);
    bsp_sync();

    for (long i = 0; i < n; ++i) {
      EXPECT(got[i] == value(step, right, kOffset + i), "size %ld: word %ld from process %d", n, i,
             right);
      EXPECT(own[i] == value(step, me, kOffset + i), "size %ld: word %ld from itself", n, i);
      /* reg[0..2): the left neighbour's put wins over the get's result. */
      const long long want_reg = i < 2 ? put_value(step, left, i) : value(step, left, i);
      EXPECT(reg[i] == want_reg, "size %ld: registered word %ld from process %d", n, i, left);
    }
    EXPECT(got[n] == -7 && own[n] == -7, "size %ld: a get wrote beyond its end", n);
    if (n > 2) EXPECT(reg[n] == -7, "size %ld: a get wrote beyond its end (registered)", n);
    for (int i = 0; i < 4; ++i) EXPECT_INT(pieces[i], value(step, right, i), "piece %d", i);
    for (int i = 0; i < 2; ++i)
      EXPECT_INT(pieces[4 + i], value(step, right, 100 + i), "piece %d", i);
    for (int i = 0; i < 8; ++i)
      EXPECT_INT(pieces[6 + i], value(step, right, 20 + i), "word %d in a row", i);
    EXPECT_INT(pieces[14], -7, "after the words in a row");
    for (int q = 0; q < p; ++q)
      EXPECT(each[q * 4] == value(step, q, 4 + me) && each[q * 4 + 1] == -7,
             "size %ld: the word from process %d", n, q);
    /* The puts landed after the gets read. */
    for (int i = 0; i < nput; ++i) {
      EXPECT(src[kOffset + i] == put_value(step, left, i), "size %ld: put word %d from %d", n, i,
             left);
      EXPECT(src[kOwnPut + i] == put_value(step, me, i), "size %ld: own put word %d", n, i);
    }
    EXPECT(src[kOffset + nput] == value(step, me, kOffset + nput), "size %ld: after the put", n);
    int messages = 0, status = 0;
    bsp_qsize(&messages, &status);
    EXPECT_INT(messages, 1, "size %ld: messages", n);
    int tag = 0, from = -1;
    bsp_get_tag(&status, &tag);
    bsp_move(&from, (int)sizeof from);
    EXPECT(tag == step && from == right, "size %ld: message tag %d from %d", n, tag, from);
  }

  /* Only process 0 gets (from the last process, 64 KiB and a word); then nobody gets but
   * everybody puts; then everybody gets again. */
  for (int round = 0; round < 3; ++round) {
    ++step;
    for (long i = 0; i < kSourceWords; ++i) src[i] = value(step, me, i);
    for (long i = 0; i < 8192 + 1; ++i) got[i] = -7;
    bsp_sync();
    const int last = p - 1;
    if (round != 1 && (round == 2 || me == 0)) {
      bsp_get(last, src, 0, got, 8192 * (int)sizeof *src);
      bsp_get(last, src, 9000 * (int)sizeof *src, &got[8192], (int)sizeof *src);
    }
    long long word = put_value(step, me, 0);
    bsp_put(right, &word, reg, (int)sizeof word, (int)sizeof word);
    bsp_sync();
    if (round != 1 && (round == 2 || me == 0)) {
      for (long i = 0; i < 8192; ++i)
        EXPECT(got[i] == value(step, last, i), "round %d: word %ld from process %d", round, i,
               last);
      EXPECT(got[8192] == value(step, last, 9000), "round %d: the single word", round);
    } else {
      EXPECT(got[0] == -7, "round %d: got written without a get", round);
    }
    EXPECT(reg[1] == put_value(step, left, 0), "round %d: the put from process %d", round, left);
  }

  bsp_pop_reg(reg);
  bsp_pop_reg(src);
  bsp_sync();
  free(each);
  free(own);
  free(reg);
  free(got);
  free(src);
  test_end();
  printf("PASS drma_get_sizes\n");
  return 0;
}
