// Nested runs (MulticoreBSP 2's hierarchical BSP): every process of the outer section starts a
// nested run of 1 + pid % 3 processes (argument "two": 2 each), which does each communication
// call with its data checked; then the outer section goes on with its pid, nprocs, registrations
// and message queue as they were. One PASS line from outer pid 0 where every check held on every
// process, else FAIL lines naming what differed.
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { K = 4 };

static int two_each;        // argument "two": every nested run has 2 processes
static int outer_pid = -1;  // reaches the nested run's processes with the other globals
static int nested_size;     // likewise: the nested run's P as its pid 0 asked
static int nested_failed;   // set on the nested run's pid 0: some check failed in it

static int value(int outer, int pid, int k) { return outer * 10000 + pid * 100 + k; }

static int check(int got, int want, const char* what, int from) {
  if (got == want) return 0;
  printf("FAIL outer %d, nested %d/%d: %s from %d: got %d, want %d\n", outer_pid, bsp_pid(),
         bsp_nprocs(), what, from, got, want);
  return 1;
}

static void nested(void) {
  bsp_begin(nested_size);
  const int p = bsp_nprocs(), s = bsp_pid(), o = outer_pid;
  int bad = 0;
  if (p != nested_size) {
    printf("FAIL outer %d: the nested run has %d processes, want %d\n", o, p, nested_size);
    bad = 1;
  }
  int src[K], put_box[K], hp_box[K], mine[K], got[K], hp_got[K], direct[K], flags[64];
  for (int k = 0; k < K; ++k) {
    src[k] = value(o, s, k);
    mine[k] = value(o, s, k) + 20;
    put_box[k] = hp_box[k] = got[k] = hp_got[k] = direct[k] = -1;
  }
  memset(flags, 0, sizeof flags);
  bsp_push_reg(put_box, sizeof put_box);
  bsp_push_reg(hp_box, sizeof hp_box);
  bsp_push_reg(mine, sizeof mine);
  bsp_push_reg(flags, sizeof flags);
  int tag_nbytes = sizeof(int);
  bsp_set_tagsize(&tag_nbytes);
  bsp_sync();

  const int next = (s + 1) % p, prev = (s + p - 1) % p, after_next = (s + 2) % p;
  int hp_src[K];
  for (int k = 0; k < K; ++k) hp_src[k] = src[k] + 50;
  bsp_put(next, src, put_box, 0, sizeof src);
  bsp_hpput(prev, hp_src, hp_box, 0, sizeof hp_src);
  bsp_get(next, mine, 0, got, sizeof got);
  bsp_hpget(after_next, mine, 0, hp_got, sizeof hp_got);
  bsp_direct_get(prev, mine, 0, direct, sizeof direct);
  for (int t = 0; t < p; ++t) {
    const int payload = value(o, s, t) + 30;
    bsp_send(t, &s, &payload, sizeof payload);
  }
  bsp_sync();

  for (int k = 0; k < K; ++k) {
    bad |= check(put_box[k], value(o, prev, k), "bsp_put", prev);
    bad |= check(hp_box[k], value(o, next, k) + 50, "bsp_hpput", next);
    bad |= check(got[k], value(o, next, k) + 20, "bsp_get", next);
    bad |= check(hp_got[k], value(o, after_next, k) + 20, "bsp_hpget", after_next);
    bad |= check(direct[k], value(o, prev, k) + 20, "bsp_direct_get", prev);
  }
  int nmessages = -1, nbytes = -1;
  bsp_qsize(&nmessages, &nbytes);
  bad |= check(nmessages, p, "bsp_qsize's messages", s);
  int seen[64] = {0};
  for (int i = 0; i < nmessages; ++i) {
    int status = -1, tag = -1, payload = -1;
    bsp_get_tag(&status, &tag);
    bsp_move(&payload, sizeof payload);
    if (check(status, (int)sizeof payload, "bsp_get_tag's status", tag) || tag < 0 || tag >= p) {
      bad = 1;
      continue;
    }
    seen[tag] += 1;
    bad |= check(payload, value(o, tag, s) + 30, "bsp_send/bsp_move's payload", tag);
  }
  for (int t = 0; t < p; ++t) bad |= check(seen[t], 1, "messages tagged", t);

  // The failures reach pid 0, the process that started this nested run.
  const int one = 1;
  if (bad) bsp_put(0, &one, flags, s * (int)sizeof(int), sizeof one);
  bsp_sync();
  if (s == 0)
    for (int t = 0; t < p; ++t) nested_failed |= flags[t];
  bsp_end();
}

static void outer(void) {
  bsp_begin(bsp_nprocs());
  const int on = bsp_nprocs(), op = bsp_pid();
  int bad = 0;
  int box = -1, mine = op * 3 + 2, got = -1, fails[64];
  memset(fails, 0, sizeof fails);
  bsp_push_reg(&box, sizeof box);
  bsp_push_reg(&mine, sizeof mine);
  bsp_push_reg(fails, sizeof fails);
  const int note = 900 + op;
  bsp_send(op, NULL, &note, sizeof note);  // stays in the queue through the nested run
  bsp_sync();

  outer_pid = op;
  nested_size = two_each ? 2 : 1 + op % 3;
  bsp_init(nested, 0, NULL);
  // Between the nested bsp_init and bsp_begin: what a nested run may have, this machine's
  // processors.
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (bsp_nprocs() != online) {
    printf("FAIL outer %d: bsp_nprocs() is %d before the nested bsp_begin, want %ld\n", op,
           bsp_nprocs(), online);
    bad = 1;
  }
  nested();
  if (nested_failed) bad = 1;

  bad |= check(bsp_pid(), op, "bsp_pid after the nested run", op);
  bad |= check(bsp_nprocs(), on, "bsp_nprocs after the nested run", op);
  int nmessages = -1;
  bsp_qsize(&nmessages, NULL);
  bad |= check(nmessages, 1, "the outer queue's messages after the nested run", op);
  if (nmessages == 1) {
    int payload = -1;
    bsp_move(&payload, sizeof payload);
    bad |= check(payload, note, "the outer queue's message", op);
  }
  const int next = (op + 1) % on, prev = (op + on - 1) % on;
  const int sent = op * 7 + 1;
  bsp_put(next, &sent, &box, 0, sizeof sent);
  bsp_get(prev, &mine, 0, &got, sizeof got);
  bsp_sync();
  bad |= check(box, prev * 7 + 1, "the outer bsp_put", prev);
  bad |= check(got, prev * 3 + 2, "the outer bsp_get", prev);

  const int one = 1;
  if (bad) bsp_put(0, &one, fails, op * (int)sizeof(int), sizeof one);
  bsp_sync();
  if (op == 0) {
    int any = 0;
    for (int t = 0; t < on; ++t) {
      if (fails[t]) printf("FAIL outer process %d saw a difference\n", t);
      any |= fails[t];
    }
    if (!any) printf("PASS nested_runs\n");
  }
  bsp_end();
}

int main(int argc, char** argv) {
  two_each = argc > 1 && strcmp(argv[1], "two") == 0;
  bsp_init(outer, argc, argv);
  outer();
  return 0;
}
