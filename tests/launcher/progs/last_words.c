/* last_words.c - every process's last output is an unfinished line: "last words of PID" on
 * stdout and "last errors of PID" on stderr, without a newline, then bsp_end. */
#include <bsp.h>
#include <stdio.h>

int main(void) {
  bsp_begin(bsp_nprocs());
  printf("last words of %d", bsp_pid());
  fprintf(stderr, "last errors of %d", bsp_pid());
  fflush(stdout);
  bsp_end();
  return 0;
}
