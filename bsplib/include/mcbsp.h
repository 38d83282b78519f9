/* mcbsp.h - MulticoreBSP for C's header (its 1.x name; 2.x C++ programs include bsp.hpp, which
 * includes this), over bspg's bsp.h: a MulticoreBSP program builds unchanged with bspcc/bspcxx.
 *
 * MulticoreBSP's calls take process ids and message counts as unsigned int and sizes and offsets
 * as size_t, where the BSPlib standard (bsp.h) has int. Here the calls have MulticoreBSP's
 * prototypes: each name maps (by a macro) to an inline function of this header that converts and
 * calls bsp.h's. Values come back right where a program passes size_t or unsigned pointers
 * (bsp_qsize, bsp_get_tag, bsp_set_tagsize); bsp_get_tag's status and bsp_hpmove's result are
 * SIZE_MAX when the queue is empty, as MulticoreBSP documents. A size, offset or tag size above
 * INT_MAX (bspg moves less than 2 GiB per call) stops the job with one line naming the call:
 *   bspg: process 0: bsp_put: size 3000000000 exceeds bspg's limit of 2147483647 bytes
 * bsp_begin(P) with P above INT_MAX asks for every process available, as INT_MAX does.
 *
 * With MCBSP_COMPATIBILITY_MODE defined before the include (MulticoreBSP's switch to the
 * standard's types), the types are int and the calls are bsp.h's own.
 *
 * Also: bsp_init_with_user_data (bsp_init whose SPMD function takes a pointer), and
 * MulticoreBSP's feature macros. A program may include bsp.h as well, before or after this. */
#ifndef BSPG_MCBSP_H
#define BSPG_MCBSP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "bsp.h"

/* MulticoreBSP's type macros. */
#ifdef MCBSP_COMPATIBILITY_MODE
#define MCBSP_PROCESSOR_INDEX_DATATYPE int
#define MCBSP_NUMMSG_TYPE int
#define MCBSP_BYTESIZE_TYPE int
#else
#define MCBSP_PROCESSOR_INDEX_DATATYPE unsigned int
#define MCBSP_NUMMSG_TYPE unsigned int
#define MCBSP_BYTESIZE_TYPE size_t
#endif

/* What MulticoreBSP says it provides, for programs that test for it: bsp_hpput, bsp_hpget and
 * bsp_hpsend, and several registrations of one address. */
#ifndef MCBSP_ENABLE_HP_DIRECTIVES
#define MCBSP_ENABLE_HP_DIRECTIVES
#endif
#ifndef MCBSP_ALLOW_MULTIPLE_REGS
#define MCBSP_ALLOW_MULTIPLE_REGS
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* bsp_init whose SPMD function takes a pointer: every process but 0 (and every process a master
 * spawns) calls spmd(data) and ends; process 0 returns and calls spmd(data) itself, typically
 * right away. data is this process's pointer: each process passes its own, made by its own run of
 * main up to here (processes share no memory). One such call per program: a later SPMD section
 * cannot carry process 0's data to the others, and a second call stops the job. O(1). */
void bsp_init_with_user_data(void (*spmd)(void *), int argc, char **argv, void *data);

/* For the inline functions below, not for programs: stop the job with one line naming `call`
 * and the value that bspg's int arguments cannot hold. */
/* mcbsp::BSP_program::begin's later sections: names the section to the other processes. */
void bspg_mcbsp_name_section(void (*section)(void));
BSP_NORETURN void bspg_mcbsp_too_large(const char *call, const char *what, size_t value);
BSP_NORETURN void bspg_mcbsp_pid_out_of_range(const char *call, unsigned int pid);

#ifdef __cplusplus
}
#endif

#ifndef MCBSP_COMPATIBILITY_MODE

#ifdef __cplusplus
/* Overloads below (C++ only) need C++ linkage, also where a program includes this header inside
 * extern "C" { }, as MulticoreBSP 1.x's own mcbsp.hpp did. */
extern "C++" {
#endif

static inline int bspg_mcbsp_size_arg(const char *call, const char *what, size_t value) {
  if (value > (size_t)INT_MAX) bspg_mcbsp_too_large(call, what, value);
  return (int)value;
}

static inline int bspg_mcbsp_pid_arg(const char *call, unsigned int pid) {
  if (pid > (unsigned int)INT_MAX) bspg_mcbsp_pid_out_of_range(call, pid);
  return (int)pid;
}

/* --- SPMD: MulticoreBSP's unsigned process counts and ids --- */

static inline void bspg_mcbsp_begin(unsigned int P) {
  bsp_begin(P > (unsigned int)INT_MAX ? INT_MAX : (int)P);
}

static inline unsigned int bspg_mcbsp_nprocs(void) { return (unsigned int)bsp_nprocs(); }

static inline unsigned int bspg_mcbsp_pid(void) { return (unsigned int)bsp_pid(); }

/* --- DRMA: size_t sizes and offsets. MulticoreBSP 2.x declares put's destination const. --- */

static inline void bspg_mcbsp_push_reg(const void *address, size_t size) {
  bsp_push_reg(address, bspg_mcbsp_size_arg("bsp_push_reg", "size", size));
}

static inline void bspg_mcbsp_put(unsigned int pid, const void *source, const void *destination,
                                  size_t offset, size_t size) {
  bsp_put(bspg_mcbsp_pid_arg("bsp_put", pid), source, (void *)(uintptr_t)destination,
          bspg_mcbsp_size_arg("bsp_put", "offset", offset),
          bspg_mcbsp_size_arg("bsp_put", "size", size));
}

static inline void bspg_mcbsp_hpput(unsigned int pid, const void *source, const void *destination,
                                    size_t offset, size_t size) {
  bsp_hpput(bspg_mcbsp_pid_arg("bsp_hpput", pid), source, (void *)(uintptr_t)destination,
            bspg_mcbsp_size_arg("bsp_hpput", "offset", offset),
            bspg_mcbsp_size_arg("bsp_hpput", "size", size));
}

static inline void bspg_mcbsp_get(unsigned int pid, const void *source, size_t offset,
                                  void *destination, size_t size) {
  bsp_get(bspg_mcbsp_pid_arg("bsp_get", pid), source,
          bspg_mcbsp_size_arg("bsp_get", "offset", offset), destination,
          bspg_mcbsp_size_arg("bsp_get", "size", size));
}

static inline void bspg_mcbsp_hpget(unsigned int pid, const void *source, size_t offset,
                                    void *destination, size_t size) {
  bsp_hpget(bspg_mcbsp_pid_arg("bsp_hpget", pid), source,
            bspg_mcbsp_size_arg("bsp_hpget", "offset", offset), destination,
            bspg_mcbsp_size_arg("bsp_hpget", "size", size));
}

static inline void bspg_mcbsp_direct_get(unsigned int pid, const void *source, size_t offset,
                                         void *destination, size_t size) {
  bsp_direct_get(bspg_mcbsp_pid_arg("bsp_direct_get", pid), source,
                 bspg_mcbsp_size_arg("bsp_direct_get", "offset", offset), destination,
                 bspg_mcbsp_size_arg("bsp_direct_get", "size", size));
}

/* --- BSMP: size_t sizes; an empty queue gives SIZE_MAX --- */

static inline void bspg_mcbsp_set_tagsize(size_t *size) {
  int tag_nbytes;
  /* bsp_set_tagsize names the NULL itself. */
  if (size == NULL) bsp_set_tagsize(NULL);
  tag_nbytes = bspg_mcbsp_size_arg("bsp_set_tagsize", "tag size", *size);
  bsp_set_tagsize(&tag_nbytes);
  *size = (size_t)tag_nbytes;
}

static inline void bspg_mcbsp_send(unsigned int pid, const void *tag, const void *payload,
                                   size_t size) {
  bsp_send(bspg_mcbsp_pid_arg("bsp_send", pid), tag, payload,
           bspg_mcbsp_size_arg("bsp_send", "size", size));
}

static inline void bspg_mcbsp_hpsend(unsigned int pid, const void *tag, const void *payload,
                                     size_t size) {
  bsp_hpsend(bspg_mcbsp_pid_arg("bsp_hpsend", pid), tag, payload,
             bspg_mcbsp_size_arg("bsp_hpsend", "size", size));
}

/* accumulated_size may be NULL (MulticoreBSP: optional). */
static inline void bspg_mcbsp_qsize(unsigned int *packets, size_t *accumulated_size) {
  int count, bytes;
  bsp_qsize(&count, &bytes);
  if (packets != NULL) *packets = (unsigned int)count;
  if (accumulated_size != NULL) *accumulated_size = (size_t)bytes;
}

static inline void bspg_mcbsp_get_tag(size_t *status, void *tag) {
  int payload_nbytes;
  /* bsp_get_tag names the NULL itself. */
  bsp_get_tag(status == NULL ? NULL : &payload_nbytes, tag);
  *status = payload_nbytes < 0 ? SIZE_MAX : (size_t)payload_nbytes;
}

static inline void bspg_mcbsp_move(void *payload, size_t max_copy_size) {
  bsp_move(payload, bspg_mcbsp_size_arg("bsp_move", "size", max_copy_size));
}

static inline size_t bspg_mcbsp_hpmove(void **p_tag, void **p_payload) {
  const int payload_nbytes = bsp_hpmove(p_tag, p_payload);
  return payload_nbytes < 0 ? SIZE_MAX : (size_t)payload_nbytes;
}

#ifdef __cplusplus
/* C++: the standard's int pointers work as well, e.g. for MulticoreBSP 2.x programs that declare
 * their variables with bsp.h's bsp_nprocs_t and bsp_size_t (int in bspg). */
static inline void bspg_mcbsp_qsize(int *packets, int *accumulated_size) {
  bsp_qsize(packets, accumulated_size);
}
static inline void bspg_mcbsp_get_tag(int *status, void *tag) { bsp_get_tag(status, tag); }
static inline void bspg_mcbsp_set_tagsize(int *size) { bsp_set_tagsize(size); }
} /* extern "C++" */
#endif

#define bsp_begin bspg_mcbsp_begin
#define bsp_nprocs bspg_mcbsp_nprocs
#define bsp_pid bspg_mcbsp_pid
#define bsp_push_reg bspg_mcbsp_push_reg
#define bsp_put bspg_mcbsp_put
#define bsp_hpput bspg_mcbsp_hpput
#define bsp_get bspg_mcbsp_get
#define bsp_hpget bspg_mcbsp_hpget
#define bsp_direct_get bspg_mcbsp_direct_get
#define bsp_set_tagsize bspg_mcbsp_set_tagsize
#define bsp_send bspg_mcbsp_send
#define bsp_hpsend bspg_mcbsp_hpsend
#define bsp_qsize bspg_mcbsp_qsize
#define bsp_get_tag bspg_mcbsp_get_tag
#define bsp_move bspg_mcbsp_move
#define bsp_hpmove bspg_mcbsp_hpmove

#endif /* !MCBSP_COMPATIBILITY_MODE */

#endif /* BSPG_MCBSP_H */
