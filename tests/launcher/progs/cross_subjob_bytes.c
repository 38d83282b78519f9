/* cross_subjob_bytes.c - bspg_sync_cross_subjob_bytes(3) as a program sees it, with the processes
 * in subjobs (BSPG_SUBJOB, from bsprun or with_sites.sh). Each process learns every process's
 * subjob, then checks the count after: an empty sync (0); a superstep whose puts, gets and
 * messages stay inside the subjob (0); one that puts `n` bytes to a process of another subjob
 * (at least n, at most n + 256); a 1 MiB put to another subjob (at least 1 MiB); a bsp_get from
 * another subjob (its request only: under 256 bytes from the getter; the server's reply is
 * counted by the server). Prints "cross_subjob_bytes: pid P: ok" or what was wrong, and pid 0
 * "cross_subjob_bytes: N processes, all correct". Exits 1 on any error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bspg.h"

static int errors = 0;

static void expect_between(const char* what, size_t got, size_t low, size_t high) {
  if (got < low || got > high) {
    ++errors;
    printf("cross_subjob_bytes: pid %d: %s: %zu bytes, not %zu..%zu\n", bsp_pid(), what, got, low,
           high);
  }
}

int main(void) {
  bsp_begin(bsp_nprocs());
  const int p = bsp_nprocs(), s = bsp_pid();
  enum { kSmall = 1000, kLarge = 1 << 20 };
  int* subjob = calloc((size_t)p, sizeof(int));
  char* area = calloc((size_t)kLarge, 1);
  char* source = calloc((size_t)kLarge, 1);
  if (!subjob || !area || !source) bsp_abort("cross_subjob_bytes: out of memory\n");
  bsp_push_reg(subjob, p * (int)sizeof(int));
  bsp_push_reg(area, kLarge);
  bsp_sync();
  const int mine = bspg_subjob();
  for (int q = 0; q < p; ++q) bsp_put(q, &mine, subjob, s * (int)sizeof(int), (int)sizeof(int));
  bsp_sync();

  /* A partner in this subjob and one in another, where there are. */
  int same = -1, other = -1;
  for (int k = 1; k < p; ++k) {
    const int q = (s + k) % p;
    if (subjob[q] == mine && same < 0) same = q;
    if (subjob[q] != mine && other < 0) other = q;
  }

  bsp_sync();
  expect_between("empty sync", bspg_sync_cross_subjob_bytes(), 0, 0);

  if (same >= 0) {
    bsp_put(same, source, area, 0, kSmall);
    bsp_get(same, area, 0, source, 64);
    bsp_send(same, NULL, source, 100);
  }
  bsp_sync();
  expect_between("inside the subjob", bspg_sync_cross_subjob_bytes(), 0, 0);

  if (other >= 0) bsp_put(other, source, area, 0, kSmall);
  bsp_sync();
  if (other >= 0) expect_between("put across", bspg_sync_cross_subjob_bytes(), kSmall, kSmall + 256);

  if (other >= 0) bsp_put(other, source, area, 0, kLarge);
  bsp_sync();
  if (other >= 0)
    expect_between("1 MiB put across", bspg_sync_cross_subjob_bytes(), kLarge, kLarge + 4096);

  if (other >= 0) bsp_get(other, area, 0, source, kSmall);
  bsp_sync();
  /* The getter sends a request; whoever it asks sends kSmall bytes back, counted there. */
  int asked = 0;
  for (int q = 0; q < p; ++q) {
    int first_other = -1;
    for (int k = 1; k < p && first_other < 0; ++k)
      if (subjob[(q + k) % p] != subjob[q]) first_other = (q + k) % p;
    if (first_other == s) ++asked;
  }
  expect_between("get across", bspg_sync_cross_subjob_bytes(), (size_t)asked * kSmall,
                 (size_t)asked * kSmall + (other >= 0 ? 256 : 0) + (size_t)asked * 256);

  bsp_pop_reg(area);
  bsp_pop_reg(subjob);
  bsp_sync();
  printf(errors ? "cross_subjob_bytes: pid %d: WRONG\n" : "cross_subjob_bytes: pid %d: ok\n", s);
  int* all_errors = calloc((size_t)p, sizeof(int));
  bsp_push_reg(all_errors, p * (int)sizeof(int));
  bsp_sync();
  bsp_put(0, &errors, all_errors, s * (int)sizeof(int), (int)sizeof(int));
  bsp_sync();
  int total = 0;
  for (int q = 0; q < p; ++q) total += all_errors[q];
  if (s == 0 && total == 0) printf("cross_subjob_bytes: %d processes, all correct\n", p);
  bsp_end();
  return total ? 1 : 0;
}
