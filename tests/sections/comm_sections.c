/* comm_sections [SECTIONS]: every communication call in every SPMD section of a program with
 * several (bsp_init(part); part(); SECTIONS times, 3 by default), each with its data checked:
 * bsp_put, bsp_hpput, bsp_get, bsp_hpget, bsp_direct_get (of a local variable and of a global
 * array), bsp_send with bsp_move and bsp_hpmove. Each section asks for one process fewer than the
 * one before (at least 1), then all again, so that processes wait out sections and come back.
 * Process 0 prints "section S: ok on P" for each and "PASS comm_sections" at the end; a wrong
 * value stops the job with a line starting "FAIL". */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>

#define WORDS 64

static int section;         /* counted by process 0; its value reaches the others */
static double table[WORDS]; /* a registered global, as many programs have */

static void fail_if(int bad, const char *what, int from, double got, double want) {
  if (bad)
    bsp_abort("FAIL comm_sections: section %d, process %d: %s from %d: %g, not %g\n", section,
              bsp_pid(), what, from, got, want);
}

/* The value process q holds at word i in section s: distinct for every (s, q, i). */
static double value(int s, int q, int i) { return 1000.0 * s + 100.0 * q + i + 0.5; }

static void part(void) {
  bsp_begin(bsp_nprocs() - section % 4 > 0 ? bsp_nprocs() - section % 4 : 1);
  const int p = bsp_nprocs(), s = bsp_pid(), left = (s + p - 1) % p, right = (s + 1) % p;
  double local = value(section, s, 0);
  double in_put[2] = {-1, -1}, in_hpput[2] = {-1, -1};
  for (int i = 0; i < WORDS; ++i) table[i] = value(section, s, i);
  int tag = sizeof(int);
  bsp_set_tagsize(&tag);
  bsp_push_reg(&local, sizeof local);
  bsp_push_reg(table, sizeof table);
  bsp_push_reg(in_put, sizeof in_put);
  bsp_push_reg(in_hpput, sizeof in_hpput);
  bsp_sync();

  /* Direct gets of every process's local and of the global, now. */
  for (int q = 0; q < p; ++q) {
    double got = -1, word = -1;
    bsp_direct_get(q, &local, 0, &got, sizeof got);
    fail_if(got != value(section, q, 0), "bsp_direct_get of a local", q, got, value(section, q, 0));
    bsp_direct_get(q, table, 7 * (int)sizeof(double), &word, sizeof word);
    fail_if(word != value(section, q, 7), "bsp_direct_get of a global", q, word,
            value(section, q, 7));
  }

  /* Puts, gets and messages of one superstep. */
  double source[2] = {value(section, s, 1), value(section, s, 2)};
  bsp_put(right, source, in_put, 0, sizeof source);
  source[0] = source[1] = -7; /* the put copied them already */
  double hp[2] = {value(section, s, 3), value(section, s, 4)};
  bsp_hpput(left, hp, in_hpput, 0, sizeof hp);
  double got[2] = {-1, -1}, hpgot = -1;
  bsp_get(right, table, 10 * (int)sizeof(double), got, sizeof got);
  bsp_hpget(left, table, 20 * (int)sizeof(double), &hpgot, sizeof hpgot);
  double payload[3] = {value(section, s, 30), value(section, s, 31), value(section, s, 32)};
  bsp_send(right, &s, payload, sizeof payload);
  bsp_send(left, &s, payload, 2 * sizeof(double));
  bsp_sync();

  fail_if(in_put[0] != value(section, left, 1), "bsp_put", left, in_put[0],
          value(section, left, 1));
  fail_if(in_put[1] != value(section, left, 2), "bsp_put", left, in_put[1],
          value(section, left, 2));
  fail_if(in_hpput[0] != value(section, right, 3), "bsp_hpput", right, in_hpput[0],
          value(section, right, 3));
  fail_if(in_hpput[1] != value(section, right, 4), "bsp_hpput", right, in_hpput[1],
          value(section, right, 4));
  fail_if(got[0] != value(section, right, 10), "bsp_get", right, got[0], value(section, right, 10));
  fail_if(got[1] != value(section, right, 11), "bsp_get", right, got[1], value(section, right, 11));
  fail_if(hpgot != value(section, left, 20), "bsp_hpget", left, hpgot, value(section, left, 20));

  int messages = -1, bytes = -1;
  bsp_qsize(&messages, &bytes);
  fail_if(messages != 2, "bsp_qsize (messages)", s, messages, 2);
  for (int m = 0; m < 2; ++m) {
    int size = -1, from = -1;
    bsp_get_tag(&size, &from);
    double body[3] = {-1, -1, -1};
    const int words = size / (int)sizeof(double);
    if (m == 0) {
      bsp_move(body, sizeof body);
    } else {
      void *tag_at = NULL, *payload_at = NULL;
      bsp_hpmove(&tag_at, &payload_at);
      for (int i = 0; i < words; ++i) body[i] = ((const double *)payload_at)[i];
    }
    for (int i = 0; i < words; ++i)
      fail_if(body[i] != value(section, from, 30 + i), "a message", from, body[i],
              value(section, from, 30 + i));
  }
  bsp_pop_reg(in_hpput);
  bsp_pop_reg(in_put);
  bsp_pop_reg(table);
  bsp_pop_reg(&local);
  bsp_sync();
  if (s == 0) printf("section %d: ok on %d\n", section, p);
  bsp_end();
}

int main(int argc, char **argv) {
  const int sections = argc > 1 ? atoi(argv[1]) : 3;
  for (section = 0; section < sections; ++section) {
    bsp_init(part, argc, argv);
    part();
  }
  printf("PASS comm_sections\n");
  return 0;
}
