/* samplesort - parallel sample sort (regular sampling) with bulk synchronous message passing.
 *
 * Each process generates its own pseudo-random keys (a different count per process), sorts
 * them, and sends p regular samples to process 0 with bsp_send. Process 0 sorts the samples,
 * picks p-1 splitters and sends them to everyone. Every process then sends each bucket of keys
 * as one message (variable size, possibly empty) to its owner, with a two-int tag
 * (source pid, key count). Receivers read the queue with bsp_qsize, bsp_get_tag and, on
 * alternate messages, bsp_move or bsp_hpmove (keeping the pointers until the queue is empty),
 * and merge.
 *
 * Checks: tags and payload sizes agree, qsize counts the queue, the result is locally sorted,
 * ordered across processes (bsp_get of the neighbour's first key), and equal, key by key,
 * to a sequential sort of all keys done on process 0 (which regenerates every process's input
 * and reads the distributed result with bsp_get). */
#include <string.h>

#include "check.h"

typedef struct {
  int source;
  int count;
} bucket_tag;

static int compare_keys(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Input of process s: a count that differs per process (and is 0 for one of them at p >= 3). */
static int input_count(int s, int p) {
  if (p >= 3 && s == 1) return 0;
  return 2000 + 733 * s;
}

static void generate_input(int s, int p, uint32_t *keys) {
  uint64_t state = rng_seed(s, 7);
  int count = input_count(s, p);
  for (int i = 0; i < count; i++) {
    /* Small key range, so many duplicates cross the splitters. */
    keys[i] = (uint32_t)(rng_next(&state) % 5000u);
  }
}

int main(void) {
  bsp_begin(bsp_nprocs());
  check_program = "samplesort";
  int p = bsp_nprocs(), s = bsp_pid();

  int nlocal = input_count(s, p);
  uint32_t *keys = check_malloc((size_t)nlocal * sizeof *keys);
  generate_input(s, p, keys);
  qsort(keys, (size_t)nlocal, sizeof *keys, compare_keys);

  /* Superstep 1: p regular samples (or fewer, if this process has fewer keys) to process 0. */
  int tagsize = (int)sizeof(bucket_tag);
  bsp_set_tagsize(&tagsize);
  CHECK_LONG(tagsize, 0, "bsp_set_tagsize: the initial tag size");
  bsp_sync();

  int nsamples = nlocal < p ? nlocal : p;
  uint32_t *samples = check_malloc((size_t)p * sizeof *samples);
  for (int i = 0; i < nsamples; i++) samples[i] = keys[(long)i * nlocal / nsamples];
  bucket_tag sample_tag = {s, nsamples};
  bsp_send(0, &sample_tag, samples, nsamples * (int)sizeof *samples);
  bsp_sync();

  /* Superstep 2: process 0 picks the splitters and sends them to every process. */
  uint32_t *splitters = check_malloc((size_t)p * sizeof *splitters);
  if (s == 0) {
    int nmessages = -1, nbytes = -1;
    bsp_qsize(&nmessages, &nbytes);
    CHECK_LONG(nmessages, p, "sample messages queued on process 0");
    uint32_t *all = check_malloc((size_t)(p * p) * sizeof *all);
    int total = 0;
    for (int m = 0; m < p; m++) {
      int status = -2;
      bucket_tag tag = {-1, -1};
      bsp_get_tag(&status, &tag);
      CHECK(tag.source >= 0 && tag.source < p, "sample tag names source %d", tag.source);
      CHECK_LONG(status, tag.count * (int)sizeof(uint32_t), "sample payload size from process %d",
                 tag.source);
      bsp_move(all + total, status);
      total += tag.count;
    }
    CHECK_LONG(total * (int)sizeof(uint32_t), nbytes, "bsp_qsize accum_nbytes of the samples");
    int status = 0;
    bucket_tag none = {-1, -1};
    bsp_get_tag(&status, &none);
    CHECK_LONG(status, -1, "bsp_get_tag on the emptied queue");
    qsort(all, (size_t)total, sizeof *all, compare_keys);
    for (int t = 1; t < p; t++) splitters[t - 1] = total > 0 ? all[(long)t * total / p] : 0;
    bucket_tag tag = {0, p - 1};
    for (int t = 0; t < p; t++) bsp_send(t, &tag, splitters, (p - 1) * (int)sizeof *splitters);
    free(all);
  }
  bsp_sync();

  int status = -2;
  bucket_tag tag = {-1, -1};
  bsp_get_tag(&status, &tag);
  CHECK_LONG(status, (p - 1) * (int)sizeof(uint32_t), "splitter message size");
  CHECK_LONG(tag.count, p - 1, "splitter count in the tag");
  bsp_move(splitters, status);

  /* Superstep 3: bucket t (keys k with splitters[t-1] <= k < splitters[t]) goes to process t,
   * as one message even when empty. */
  int begin = 0;
  for (int t = 0; t < p; t++) {
    int end = begin;
    while (end < nlocal && (t == p - 1 || keys[end] < splitters[t])) end++;
    bucket_tag bucket = {s, end - begin};
    bsp_send(t, &bucket, keys + begin, (end - begin) * (int)sizeof *keys);
    begin = end;
  }
  CHECK_LONG(begin, nlocal, "keys sent in buckets");
  bsp_sync();

  int nmessages = -1, nbytes = -1;
  bsp_qsize(&nmessages, &nbytes);
  CHECK_LONG(nmessages, p, "bucket messages queued");
  int nresult = nbytes / (int)sizeof(uint32_t);
  uint32_t *result = check_malloc((size_t)nresult * sizeof *result);
  int filled = 0;
  int *seen = check_malloc((size_t)p * sizeof *seen);
  memset(seen, 0, (size_t)p * sizeof *seen);
  void **held_payload = check_malloc((size_t)p * sizeof *held_payload);
  int *held_at = check_malloc((size_t)p * sizeof *held_at);
  int *held_size = check_malloc((size_t)p * sizeof *held_size);
  for (int m = 0; m < p; m++) {
    held_payload[m] = NULL;
    int left = -1, left_bytes = -1;
    bsp_qsize(&left, &left_bytes);
    CHECK_LONG(left, p - m, "queue length before message %d", m);
    CHECK_LONG(left_bytes, nbytes - filled * (int)sizeof(uint32_t),
               "queued bytes before message %d", m);
    if (m % 2 == 0) {
      bucket_tag got = {-1, -1};
      bsp_get_tag(&status, &got);
      CHECK(got.source >= 0 && got.source < p && !seen[got.source], "bucket tag source %d",
            got.source);
      seen[got.source] = 1;
      CHECK_LONG(status, got.count * (int)sizeof(uint32_t), "bucket payload size from %d",
                 got.source);
      bsp_move(result + filled, status);
      filled += got.count;
    } else {
      void *tag_ptr = NULL, *payload_ptr = NULL;
      int size = bsp_hpmove(&tag_ptr, &payload_ptr);
      bucket_tag got;
      memcpy(&got, tag_ptr, sizeof got);
      CHECK(got.source >= 0 && got.source < p && !seen[got.source], "bucket tag source %d (hpmove)",
            got.source);
      seen[got.source] = 1;
      CHECK_LONG(size, got.count * (int)sizeof(uint32_t), "bsp_hpmove payload size from %d",
                 got.source);
      /* Zero copy: keep the pointer and copy once the whole queue has been read (the
       * pointers stay valid until the next bsp_sync, whatever else is moved meanwhile). */
      held_payload[m] = payload_ptr;
      held_at[m] = filled;
      held_size[m] = size;
      filled += got.count;
    }
  }
  for (int m = 0; m < p; m++)
    if (held_payload[m] != NULL && held_size[m] > 0)
      memcpy(result + held_at[m], held_payload[m], (size_t)held_size[m]);
  CHECK_LONG(filled, nresult, "keys received");
  void *tag_ptr = NULL, *payload_ptr = NULL;
  CHECK_LONG(bsp_hpmove(&tag_ptr, &payload_ptr), -1, "bsp_hpmove on the emptied queue");
  qsort(result, (size_t)nresult, sizeof *result, compare_keys);
  for (int i = 1; i < nresult; i++) CHECK(result[i - 1] <= result[i], "result not sorted at %d", i);
  for (int i = 0; i < nresult; i++) {
    if (s > 0)
      CHECK(result[i] >= splitters[s - 1], "key %u below my lower splitter %u", result[i],
            splitters[s - 1]);
    if (s < p - 1)
      CHECK(result[i] < splitters[s], "key %u not below my splitter %u", result[i], splitters[s]);
  }

  /* Superstep 4: publish counts and results; process 0 checks the whole against a sequential sort.
   */
  int *counts = check_malloc((size_t)p * sizeof *counts);
  bsp_push_reg(counts, p * (int)sizeof *counts);
  bsp_push_reg(nresult > 0 ? result : NULL, nresult * (int)sizeof *result);
  bsp_sync();
  bsp_put(0, &nresult, counts, s * (int)sizeof(int), (int)sizeof(int));
  bsp_sync();
  long total = 0;
  uint32_t *everything = NULL;
  if (s == 0) {
    for (int t = 0; t < p; t++) total += counts[t];
    everything = check_malloc((size_t)total * sizeof *everything);
    long offset = 0;
    for (int t = 0; t < p; t++) {
      if (counts[t] > 0)
        bsp_get(t, result, 0, everything + offset, counts[t] * (int)sizeof(uint32_t));
      offset += counts[t];
    }
  }
  bsp_sync();
  if (s == 0) {
    long expected_total = 0;
    for (int t = 0; t < p; t++) expected_total += input_count(t, p);
    CHECK_LONG(total, expected_total, "keys after sorting");
    uint32_t *reference = check_malloc((size_t)expected_total * sizeof *reference);
    long offset = 0;
    for (int t = 0; t < p; t++) {
      generate_input(t, p, reference + offset);
      offset += input_count(t, p);
    }
    qsort(reference, (size_t)expected_total, sizeof *reference, compare_keys);
    for (long i = 0; i < total; i++)
      CHECK(everything[i] == reference[i], "sorted key %ld is %u, sequential sort says %u", i,
            everything[i], reference[i]);
    free(reference);
    free(everything);
  }
  bsp_pop_reg(nresult > 0 ? result : NULL);
  bsp_pop_reg(counts);
  bsp_sync();
  free(counts);
  free(held_size);
  free(held_at);
  free(held_payload);
  free(seen);
  free(result);
  free(splitters);
  free(samples);
  free(keys);
  bsp_end();
  printf("PASS samplesort\n");
  return 0;
}
