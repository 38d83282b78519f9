/* bsp_exchange.c - a BSPlib program that checks its own communication, for runs across hosts.
 * Every process puts its pid into the next process's array, gets a value from the previous one,
 * and sends every process a message tagged with its pid. Each checks what it received and
 * prints one line: "bsp_exchange: pid P of N on HOST subjob K: ok" (or "WRONG ..."). pid 0
 * then prints "bsp_exchange: N processes, all correct" when the global check passes; the
 * checks include a 1 MiB put and a 512 KiB get across hosts (large puts take the mailbox path)
 * and supersteps that only the processes of one subjob synchronise (bspg_group_sync); the
 * program exits 1 if anything was wrong. Optional argument: "--abort-on PID" makes that
 * process call bsp_abort after the first sync. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bspg.h"

int main(int argc, char** argv) {
  int abort_on = -1;
  for (int i = 1; i + 1 < argc; ++i)
    if (strcmp(argv[i], "--abort-on") == 0) abort_on = atoi(argv[i + 1]);

  bsp_begin(bsp_nprocs());
  int p = bsp_nprocs(), s = bsp_pid();
  char host[256] = "?";
  gethostname(host, sizeof host - 1);

  int* from_prev = calloc((size_t)p, sizeof(int)); /* slot s-1 filled by a put from s-1 */
  int mine = 1000 + s, got_prev = -1;
  bsp_push_reg(from_prev, p * (int)sizeof(int));
  bsp_push_reg(&mine, (int)sizeof mine);
  int tagsize = (int)sizeof(int);
  bsp_set_tagsize(&tagsize);
  bsp_sync();
  if (s == abort_on) bsp_abort("bsp_exchange: process %d aborts on request\n", s);

  int next = (s + 1) % p, prev = (s + p - 1) % p;
  bsp_put(next, &s, from_prev, s * (int)sizeof(int), (int)sizeof(int));
  bsp_get(prev, &mine, 0, &got_prev, (int)sizeof(int));
  for (int q = 0; q < p; ++q) {
    double payload = s * 10.0 + q;
    bsp_send(q, &s, &payload, (int)sizeof payload);
  }
  bsp_sync();

  int errors = 0;
  if (from_prev[prev] != prev) {
    ++errors;
    printf("bsp_exchange: pid %d: put from %d gave %d\n", s, prev, from_prev[prev]);
  }
  if (got_prev != 1000 + prev) {
    ++errors;
    printf("bsp_exchange: pid %d: get from %d gave %d, not %d\n", s, prev, got_prev, 1000 + prev);
  }
  int nmessages = 0, nbytes = 0;
  bsp_qsize(&nmessages, &nbytes);
  if (nmessages != p || nbytes != p * (int)sizeof(double)) {
    ++errors;
    printf("bsp_exchange: pid %d: %d messages of %d bytes, not %d\n", s, nmessages, nbytes, p);
  }
  char* seen = calloc((size_t)p, 1);
  for (int m = 0; m < nmessages; ++m) {
    int status = 0, tag = -1;
    double payload = -1;
    bsp_get_tag(&status, &tag);
    bsp_move(&payload, (int)sizeof payload);
    if (status != (int)sizeof(double) || tag < 0 || tag >= p || payload != tag * 10.0 + s ||
        seen[tag]++) {
      ++errors; /* also when a process sent twice */
      printf("bsp_exchange: pid %d: message %d: status %d tag %d payload %g\n", s, m, status, tag,
             payload);
    }
  }
  free(seen);

  /* Large transfers: 1 MiB put to the next process, 512 KiB get from the previous one. */
  enum { kBig = 1 << 20 };
  unsigned char* big_in = malloc(kBig);
  unsigned char* big_out = malloc(kBig);
  unsigned char* big_got = malloc(kBig / 2);
  for (int i = 0; i < kBig; ++i) big_out[i] = (unsigned char)(i * 7 + s);
  memset(big_in, 0, kBig);
  bsp_push_reg(big_in, kBig);
  bsp_push_reg(big_out, kBig);
  bsp_sync();
  bsp_put(next, big_out, big_in, 0, kBig);
  bsp_get(prev, big_out, kBig / 2, big_got, kBig / 2);
  bsp_sync();
  for (int i = 0; i < kBig; ++i)
    if (big_in[i] != (unsigned char)(i * 7 + prev)) {
      ++errors;
      printf("bsp_exchange: pid %d: 1 MiB put from %d wrong at byte %d\n", s, prev, i);
      break;
    }
  for (int i = 0; i < kBig / 2; ++i)
    if (big_got[i] != (unsigned char)((i + kBig / 2) * 7 + prev)) {
      ++errors;
      printf("bsp_exchange: pid %d: 512 KiB get from %d wrong at byte %d\n", s, prev, i);
      break;
    }

  /* Subjob supersteps: members of a subjob exchange pids among themselves, 20 times. */
  int group = bspg_subjob_group(), q = bspg_group_nprocs(group);
  if (q != bspg_subjob_nprocs(bspg_subjob())) {
    ++errors;
    printf("bsp_exchange: pid %d: subjob group has %d members, subjob %d\n", s, q,
           bspg_subjob_nprocs(bspg_subjob()));
  }
  for (int step = 0; step < 20 && !errors; ++step) {
    int value = s * 100 + step;
    for (int r = 0; r < q; ++r)
      bsp_put(bspg_group_member(group, r), &value, from_prev, s * (int)sizeof(int),
              (int)sizeof(int));
    bspg_group_sync(group);
    for (int r = 0; r < q; ++r) {
      int member = bspg_group_member(group, r);
      if (from_prev[member] != member * 100 + step) {
        ++errors;
        printf("bsp_exchange: pid %d: subjob superstep %d: member %d gave %d\n", s, step, member,
               from_prev[member]);
      }
    }
  }
  bsp_pop_reg(big_out);
  bsp_pop_reg(big_in);

  printf("bsp_exchange: pid %d of %d on %s subjob %d of %d: %s\n", s, p, host, bspg_subjob(),
         bspg_nsubjobs(), errors ? "WRONG" : "ok");
  fflush(stdout);

  /* Everybody tells pid 0 its error count. */
  int* all_errors = calloc((size_t)p, sizeof(int));
  bsp_push_reg(all_errors, p * (int)sizeof(int));
  bsp_sync();
  bsp_put(0, &errors, all_errors, s * (int)sizeof(int), (int)sizeof(int));
  bsp_sync();
  int total = 0;
  if (s == 0) {
    for (int q = 0; q < p; ++q) total += all_errors[q];
    if (total == 0)
      printf("bsp_exchange: %d processes, all correct\n", p);
    else
      printf("bsp_exchange: %d processes, %d errors\n", p, total);
    fflush(stdout);
  }
  bsp_pop_reg(all_errors);
  bsp_pop_reg(&mine);
  bsp_pop_reg(from_prev);
  bsp_sync();
  bsp_end();
  free(all_errors);
  free(from_prev);
  free(big_in);
  free(big_out);
  free(big_got);
  return (errors || total) ? 1 : 0;
}
