/* bsp.h - the BSPlib standard C API (Hill, McColl, Stefanescu, Goudreau, Lang, Rao, Suel,
 * Tsantilas, Bisseling: "BSPlib: The BSP Programming Library", Parallel Computing 24, 1998),
 * as implemented by bspg over MPI-3 one-sided communication.
 *
 * Costs below use p = bsp_nprocs(), h = the largest number of bytes a process sends or
 * receives in a superstep, and g, l the machine's BSP parameters (benchmarks/bspbench).
 * Every call validates its arguments; misuse aborts every process with one message that
 * names the call and the cause. bspg extensions live in bspg.h. */
#ifndef BSP_H
#define BSP_H

/* What other BSPlibs' bsp.h bring in, and programs written for them rely on: the Oxford toolset's
 * <stdio.h>, BSPonMPI's and MulticoreBSP's <stddef.h> and <stdint.h>. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define BSP_NORETURN __attribute__((noreturn))
#else
#define BSP_NORETURN
#endif

/* Types of later BSPlib revisions (MulticoreBSP, BSPonMPI 1.x). The 1998 standard uses int for
 * all three, and so do bspg's calls: a program that declares its variables with these types passes
 * them to bsp_qsize, bsp_get_tag etc. without conversions. */
typedef int bsp_size_t;   /* sizes and offsets in bytes */
typedef int bsp_pid_t;    /* process ids */
typedef int bsp_nprocs_t; /* process counts, and message counts (bsp_qsize) */

/* --- SPMD ------------------------------------------------------------------------------- */

/* Start the SPMD section on min(maxprocs, available) processes. Collective. Processes beyond
 * maxprocs wait for the others and exit with status 0. O(l). */
void bsp_begin(int maxprocs);

/* End the SPMD section. Collective. All processes but 0 then exit with status 0; process 0
 * continues sequentially. O(l). */
void bsp_end(void);

/* Name the SPMD part when it is not main: call first in main. Process 0 returns and runs main
 * sequentially until it calls spmd_part; every other process runs spmd_part and exits. O(1). */
void bsp_init(void (*spmd_part)(void), int argc, char *argv[]);

/* Number of processes: before bsp_begin, those available; inside, those started. O(1). */
int bsp_nprocs(void);

/* This process's id, 0 <= bsp_pid() < bsp_nprocs(). O(1). */
int bsp_pid(void);

/* Seconds elapsed on this process since bsp_begin. O(1). */
double bsp_time(void);

/* End the superstep: every put, get and send of it completes; registrations, pops and tag
 * size changes take effect. Collective. O(g*h + l); an empty superstep costs O(l). */
void bsp_sync(void);

/* Print the printf-style message once (from this process) and stop every process with a
 * non-zero exit. Not collective. */
BSP_NORETURN void bsp_abort(const char *format, ...);
BSP_NORETURN void bsp_vabort(const char *format, va_list args);

/* --- DRMA ------------------------------------------------------------------------------- */

/* Register the local area [ident, ident+size) as the next slot; takes effect at the next
 * bsp_sync. Collective and in the same order on every process; NULL with size 0 is allowed.
 * O(1) now, O(p) per registration at the sync. */
void bsp_push_reg(const void *ident, int size);

/* Remove the most recent registration of ident at the next bsp_sync. Collective, in the
 * same order everywhere. O(1). */
void bsp_pop_reg(const void *ident);

/* Copy nbytes from src (now) to offset bytes into the area registered as dst on process
 * pid (at the next bsp_sync). O(nbytes) now. */
void bsp_put(int pid, const void *src, void *dst, int offset, int nbytes);

/* Read nbytes at offset bytes into the area registered as src on process pid, as it is at
 * the next bsp_sync before any put of the superstep, into dst. */
void bsp_get(int pid, const void *src, int offset, void *dst, int nbytes);

/* Unbuffered variants: src (hpput) must not change, and dst (hpget) may be written, at any
 * time up to the next bsp_sync. Transfers of 64 KiB and more go straight from src into the
 * remote registered memory (hpput) and from it into dst (hpget), with no copy in between:
 * moving n bytes needs no memory beyond the two areas. O(nbytes) at the sync. */
void bsp_hpput(int pid, const void *src, void *dst, int offset, int nbytes);
void bsp_hpget(int pid, const void *src, int offset, void *dst, int nbytes);

/* Extension (MulticoreBSP, BSPonMPI 1.x): read nbytes at offset bytes into the area registered
 * as src on process pid into dst now, and return when they are here. It reads the remote memory
 * as it is at that moment (not as of any sync); with a remote process busy outside the library
 * the read completes when that process next enters it (any bspg call, e.g. its next bsp_sync).
 * O(nbytes) plus a round trip. */
void bsp_direct_get(int pid, const void *src, int offset, void *dst, int nbytes);

/* --- BSMP ------------------------------------------------------------------------------- */

/* Set the tag size in bytes from the next superstep on; *tag_nbytes receives the old one.
 * Collective, with the same value everywhere. O(1). */
void bsp_set_tagsize(int *tag_nbytes);

/* Queue a message (tag of the current tag size, payload) for process pid; readable there
 * after the next bsp_sync. O(tagsize + payload_nbytes). */
void bsp_send(int pid, const void *tag, const void *payload, int payload_nbytes);

/* Extension (MulticoreBSP, BSPonMPI 1.x): bsp_send without the copy at call time. tag and
 * payload must not change until the next bsp_sync; payloads of 1 KiB and more are moved
 * straight from them into the receiver's queue. O(tagsize) now. */
void bsp_hpsend(int pid, const void *tag, const void *payload, int payload_nbytes);

/* Messages still queued and their total payload bytes. O(1). */
void bsp_qsize(int *nmessages, int *accum_nbytes);

/* Payload size of the first queued message (-1 if none) and its tag. O(tagsize). */
void bsp_get_tag(int *status, void *tag);

/* Copy at most reception_nbytes of the first message's payload, and remove it. Misuse when the
 * queue is empty. O(bytes). */
void bsp_move(void *payload, int reception_nbytes);

/* Point at the first message's tag and payload (valid until the next bsp_sync), remove it,
 * and return its payload size; -1 if the queue is empty. O(1). */
int bsp_hpmove(void **tag_ptr_buf, void **payload_ptr_buf);

#ifdef __cplusplus
}
#endif

#endif /* BSP_H */
