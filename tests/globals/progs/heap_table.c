/* heap_table - a global pointer to memory that main's sequential part allocated with malloc.
 *
 * Usage: echo factor | heap_table init|begin
 *   init:  bsp_init first, then process 0 alone allocates and fills the table: the other
 *          processes have no such memory, and bsp_begin stops the job with one line naming
 *          'table' (at p = 1 there are no others, and the program passes)
 *   begin: every process runs main, allocates and fills its own table: each keeps its own
 *          pointer, and reads its own copy; the factor, read from standard input by process 0
 *          alone, reaches every process
 * Each process reads its entry times the factor; process 0 prints "PASS heap_table" after
 * bsp_end. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define TABLE_SIZE 1000

static double *table = NULL;
static int table_size = 0;
static int factor = 0;

static void fill_table(void) {
  table = malloc(TABLE_SIZE * sizeof *table);
  for (int i = 0; i < TABLE_SIZE; i++) table[i] = 0.5 * i;
  table_size = TABLE_SIZE;
}

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  const int s = bsp_pid();
  CHECK("heap_table", table != NULL && table_size == TABLE_SIZE, "table %p, size %d", (void *)table,
        table_size);
  CHECK("heap_table", factor == 2, "factor %d", factor);
  CHECK("heap_table", table[10 * s + 1] == 0.5 * (10 * s + 1), "table[%d] = %g", 10 * s + 1,
        table[10 * s + 1]);
  printf("pid %d: table[%d] * factor = %g\n", s, 10 * s + 1, factor * table[10 * s + 1]);
  bsp_end();
}

int main(int argc, char **argv) {
  if (argc != 2 || (strcmp(argv[1], "init") != 0 && strcmp(argv[1], "begin") != 0)) {
    printf("FAIL: usage: heap_table init|begin\n");
    return 2;
  }
  if (strcmp(argv[1], "init") == 0) bsp_init(spmd, argc, argv);
  if (scanf("%d", &factor) != 1) factor = -1;
  fill_table();
  spmd();
  printf("PASS heap_table\n");
  return 0;
}
