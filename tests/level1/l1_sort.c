/* bsp_sortI/R/D/C: one value per process, with duplicates; process i gets the i-th smallest.
 * bspg_sort_blocks: uneven element counts per process (some none), every type, duplicates. */
#include <bsp_level1.h>

#include "bsptest.h"

#define CMP(T, name)                                \
  static int name(const void *a, const void *b) {   \
    T x = *(const T *)a, y = *(const T *)b;         \
    return (x > y) - (x < y);                       \
  }
CMP(int, cmp_int)
CMP(float, cmp_float)
CMP(double, cmp_double)
CMP(char, cmp_char)

/* Value of process i in the one-per-process sorts: duplicates in pairs, in reverse order. */
static int key_of(int i) { return 50 - (i / 2) * 10; }

/* Element j of process i in the block sort: 2, 0, 4, 3 elements on processes 0..3. */
static int count_of(int i) { return i == 1 ? 0 : (i * 3) % 4 + 2; }
static int element_of(int i, int j) { return ((i * 5 + j * 3) % 7) - 3; }

#define BLOCK_TEST(T, cmp, conv)                                                         \
  do {                                                                                   \
    int n = count_of(s), total = 0, first = 0;                                           \
    for (int q = 0; q < p; ++q) {                                                        \
      if (q == s) first = total;                                                         \
      total += count_of(q);                                                              \
    }                                                                                    \
    T *mine = n ? test_alloc(sizeof(T) * n) : NULL, *want = test_alloc(sizeof(T) * total); \
    for (int j = 0; j < n; ++j) mine[j] = conv(element_of(s, j));                        \
    for (int q = 0, k = 0; q < p; ++q)                                                   \
      for (int j = 0; j < count_of(q); ++j) want[k++] = conv(element_of(q, j));          \
    qsort(want, total, sizeof(T), cmp);                                                  \
    bspg_sort_blocks(mine, n, sizeof(T), cmp);                                           \
    for (int j = 0; j < n; ++j)                                                          \
      EXPECT(mine[j] == want[first + j], "bspg_sort_blocks(%s) element %d", #T, j);      \
    free(mine);                                                                          \
    free(want);                                                                          \
  } while (0)
#define AS_INT(v) (v)
#define AS_FLOAT(v) ((float)(v) * 0.5f)
#define AS_DOUBLE(v) ((double)(v) / 3.0)
#define AS_CHAR(v) ((char)('m' + (v)))

int main(void) {
  test_begin(bsp_nprocs());
  const int p = bsp_nprocs(), s = bsp_pid();
  /* The sorted keys: process i's result is the i-th smallest of key_of(0..p-1). */
  int keys[64];
  for (int i = 0; i < p; ++i) keys[i] = key_of(i);
  qsort(keys, p, sizeof(int), cmp_int);
  EXPECT_INT(bsp_sortI(key_of(s)), keys[s], "bsp_sortI");
  EXPECT(bsp_sortR((float)key_of(s) / 4) == (float)keys[s] / 4, "bsp_sortR");
  EXPECT(bsp_sortD((double)key_of(s) / 3) == (double)keys[s] / 3, "bsp_sortD");
  EXPECT_INT(bsp_sortC((char)('a' + key_of(s) / 10)), (char)('a' + keys[s] / 10), "bsp_sortC");
  /* All equal. */
  EXPECT_INT(bsp_sortI(7), 7, "bsp_sortI of equal values");

  BLOCK_TEST(int, cmp_int, AS_INT);
  BLOCK_TEST(float, cmp_float, AS_FLOAT);
  BLOCK_TEST(double, cmp_double, AS_DOUBLE);
  BLOCK_TEST(char, cmp_char, AS_CHAR);
  test_end();
  printf("PASS l1_sort\n");
  return 0;
}
