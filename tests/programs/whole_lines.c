/* whole_lines - every process prints many long lines at once, with printf, without flushing
 * (stdout is a pipe to the MPI's starter, fully buffered unless the library says otherwise).
 * No line may be split by another process's output: a line is "line S K" followed by a run of
 * one letter chosen by pid S ('a' + S % 26), of a length that varies with K, and "end".
 *
 * Usage: whole_lines [LINES [LENGTH]]   (default 200 lines of up to 3000 letters)
 * Process 0 prints "PASS whole_lines" after bsp_end; the test counts the intact lines. */
#include <string.h>

#include "check.h"

int main(int argc, char **argv) {
  int lines = argc > 1 ? atoi(argv[1]) : 200, length = argc > 2 ? atoi(argv[2]) : 3000;
  bsp_begin(bsp_nprocs());
  check_program = "whole_lines";
  int s = bsp_pid();
  char *run = check_malloc((size_t)length + 1);
  memset(run, 'a' + s % 26, (size_t)length);
  for (int k = 0; k < lines; k++) {
    int n = length / 2 + (k * 997 + s * 131) % (length / 2 + 1);
    printf("line %d %d %.*s end\n", s, k, n, run);
  }
  free(run);
  bsp_sync();
  bsp_end();
  printf("PASS whole_lines\n");
  return 0;
}
