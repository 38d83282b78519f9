/* long_lines.c - every process prints long lines of its own letter ('a' + pid) between syncs:
 * per superstep on stdout a 20 KiB and a 100 KiB line in one write each, a 20 KiB line in 20
 * writes, and 1024 lines of 3 letters in one write (4 KiB of short lines); on stderr a 20 KiB
 * line in 5 writes. Usage: long_lines P (P processes: bsp_begin(P), in master mode too).
 * whole_lines_test.sh checks that every line arrives whole and none is lost. */
#include <bsp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kSupersteps = 3, kShortLines = 1024 };

static void write_all(int fd, const char *text, size_t length) {
  while (length > 0) {
    ssize_t n = write(fd, text, length);
    if (n <= 0) exit(3);
    text += n;
    length -= (size_t)n;
  }
}

/* A line of `letters` letters and its newline, in `writes` writes. */
static void print_line(int fd, char letter, size_t letters, int writes) {
  char *line = malloc(letters + 1);
  if (!line) exit(3);
  memset(line, letter, letters);
  line[letters] = '\n';
  size_t piece = (letters + 1 + (size_t)writes - 1) / (size_t)writes;
  for (size_t at = 0; at < letters + 1; at += piece) {
    write_all(fd, line + at, at + piece > letters + 1 ? letters + 1 - at : piece);
    sched_yield(); /* lets the other processes' pieces in between */
  }
  free(line);
}

int main(int argc, char **argv) {
  int wanted = argc > 1 ? atoi(argv[1]) : 0;
  if (wanted < 1) {
    fprintf(stderr, "usage: long_lines P\n");
    return 2;
  }
  bsp_begin(wanted);
  const char letter = (char)('a' + bsp_pid());
  char shorts[kShortLines * 4];
  for (int i = 0; i < kShortLines; ++i) {
    memset(shorts + 4 * i, letter, 3);
    shorts[4 * i + 3] = '\n';
  }
  for (int step = 0; step < kSupersteps; ++step) {
    print_line(STDOUT_FILENO, letter, 20480, 1);
    print_line(STDOUT_FILENO, letter, 102400, 1);
    print_line(STDOUT_FILENO, letter, 20480, 20);
    write_all(STDOUT_FILENO, shorts, sizeof shorts);
    print_line(STDERR_FILENO, letter, 20480, 5);
    bsp_sync();
  }
  bsp_end();
  return 0;
}
