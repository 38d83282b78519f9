/* bsp_level1.h - the Oxford BSP toolset's level-1 library (collective communication, reductions,
 * prefix operations, sorting and the machine's BSP parameters) for bspg.
 *
 * As in the Oxford toolset (manual pages bsplib_level1(3), bsp_bcast(3), bsp_fold(3), bsp_l(3),
 * release 1.4, 1998), with the C signatures of its bsp_level1.h. The calls are a layer over the
 * public bsp.h API only (bsp_push_reg, bsp_put, bsp_get, bsp_sync, bsp_pop_reg): nothing here
 * reaches into bspg's internals, and they are part of libbspg, so `bspcc prog.c` (and
 * find_package(bspg), pkg-config bspg) need nothing more.
 *
 * Common rules (every call below but bsp_s/bsp_l/bsp_g/bsp_nhalf):
 * - Collective: every process of the SPMD section makes the same call with the same root and the
 *   same nbytes, in the same order relative to its other syncs and registrations.
 * - Each call is a sequence of supersteps that ends with a bsp_sync, as the Oxford toolset's calls
 *   do: puts, gets and messages the program started before the call are delivered by its first
 *   sync, and the message queue the program had before the call is gone afterwards (as after any
 *   bsp_sync). Every call's first superstep registers the call's areas; the data moves in the
 *   next one(s).
 * - Registrations: a call registers its own areas and pops them (in reverse order) before it
 *   returns; the pops take effect at the program's next bsp_sync, like any bsp_pop_reg. The
 *   program's own registrations are neither needed nor touched. (The Oxford toolset required
 *   dst, for bsp_gather the root's dst and for bsp_scatter the root's src, to be registered by the
 *   program; with bspg they may be registered or not.)
 * - Costs: p = bsp_nprocs(), n = nbytes; g and l as in bsp.h (bytes, one superstep's latency).
 *   "2 supersteps, h = x" means a cost of about x*g + 2*l.
 * - Signatures: the Oxford ones, except that src is const void * (the Oxford header had void *;
 *   every program written for it still compiles, and const data can be passed without a cast).
 * - Misuse (a negative size, a NULL pointer where data must be read or written, a root outside
 *   0..p-1, a NULL operator, sizes whose total reaches 2 GiB) stops every process with one line
 *   "bspg: process P: <call>: <cause>". Arguments that must agree between processes are not
 *   compared: a larger nbytes than another process's is caught by bsp_put/bsp_get's own check
 *   (the message then names bsp_put or bsp_get). Called outside the SPMD section, a call stops
 *   the job with bsp_pid's message ("called outside the SPMD section").
 * - Non-commutative operators: a fold or scan combines values in pid order, left to right,
 *   (((x0 op x1) op x2) ... op xk), and so do the built-in reductions, so that floating-point
 *   results are the same on every process and equal a sequential left-to-right computation. */
#ifndef BSP_LEVEL1_H
#define BSP_LEVEL1_H

#include <bsp.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An associative operator for bsp_fold and bsp_scan: writes left op right into res. res, left and
 * right are nbytes each and never alias one another; *nbytes is the size (a pointer, as in the
 * Oxford toolset, so that Fortran 77 routines fit). Operators written with typed parameters,
 * void add(int *res, int *left, int *right, int *nbytes), are accepted too (see the macros). */
typedef void (*bsp_level1_op)(void *res, void *left, void *right, int *nbytes);

/* --- Broadcast, gather, scatter ----------------------------------------------------------- */

/* bsp_bcast: the nbytes at src on process bcast_pid are copied to dst on every process (the
 * root's own dst included; src and dst may be the same). src is read on the root only and may be
 * NULL elsewhere. Collective; 2 supersteps, h = (p-1)*n at the root. */
void bsp_bcast(int bcast_pid, const void *src, void *dst, int nbytes);

/* bsp_gather: every process's nbytes at src land at dst + pid*nbytes on process gather_pid, whose
 * dst holds p*nbytes (dst is used on the root only and may be NULL elsewhere). Collective;
 * 2 supersteps, h = (p-1)*n at the root. */
void bsp_gather(int gather_pid, const void *src, void *dst, int nbytes);

/* bsp_scatter: block i (nbytes at src + i*nbytes) of the root's src, p*nbytes in all, is copied
 * to dst on process i (src is read on the root only and may be NULL elsewhere). Collective;
 * 2 supersteps, h = (p-1)*n at the root. */
void bsp_scatter(int scatter_pid, const void *src, void *dst, int nbytes);

/* --- Reduction and parallel prefix with the program's operator ----------------------------- */

/* bsp_fold: dst on every process = x0 op x1 op ... op x(p-1), where xi is the nbytes at src on
 * process i, combined left to right in pid order (op need only be associative). Collective;
 * 2 supersteps, h = (p-1)*n, p-1 applications of op on every process. */
void bsp_fold(bsp_level1_op op, const void *src, void *dst, int nbytes);

/* bsp_scan: inclusive prefix: dst on process i = x0 op x1 op ... op xi (dst = x0 on process 0),
 * left to right in pid order. Collective; 2 supersteps, h = (p-1)*n, i applications of op on
 * process i. */
void bsp_scan(bsp_level1_op op, const void *src, void *dst, int nbytes);

/* The macros let bsp_fold and bsp_scan take an operator declared with typed parameters, as the
 * Oxford manual's examples do, without a cast or a warning in C or C++ (the call passes through
 * the generic type void (*)(void)). (bsp_fold)(...) calls the function without them. */
#define bsp_fold(op, src, dst, nbytes) \
  (bsp_fold)((bsp_level1_op)(void (*)(void))(op), (src), (dst), (nbytes))
#define bsp_scan(op, src, dst, nbytes) \
  (bsp_scan)((bsp_level1_op)(void (*)(void))(op), (src), (dst), (nbytes))

/* --- Logical reductions --------------------------------------------------------------------- */

/* bsp_all: 1 when b is non-zero on every process, else 0. bsp_any: 1 when b is non-zero on some
 * process, else 0. bsp_constantI: 1 when x has the same value on every process, else 0.
 * Collective; 2 supersteps, h = (p-1)*sizeof(int). */
int bsp_all(int b);
int bsp_any(int b);
int bsp_constantI(int x);

/* --- Arithmetic reductions and their prefix forms ------------------------------------------ */
/* I = int, R = float (Fortran's REAL), D = double. bsp_<op>X(x) returns x0 op ... op x(p-1) on
 * every process; bsp_<op>X_prefix(x) returns x0 op ... op xi on process i (inclusive). Values
 * are combined left to right in pid order, so every process gets the same bits, equal to a
 * sequential loop over x0..x(p-1). int sums and products wrap around modulo 2^32 (computed as
 * unsigned, never undefined). min/max of float and double: a NaN is ignored unless every value
 * is NaN. Collective; 2 supersteps, h = (p-1)*sizeof(type). */
int bsp_sumI(int x);
float bsp_sumR(float x);
double bsp_sumD(double x);
int bsp_sumI_prefix(int x);
float bsp_sumR_prefix(float x);
double bsp_sumD_prefix(double x);

int bsp_productI(int x);
float bsp_productR(float x);
double bsp_productD(double x);
int bsp_productI_prefix(int x);
float bsp_productR_prefix(float x);
double bsp_productD_prefix(double x);

int bsp_minI(int x);
float bsp_minR(float x);
double bsp_minD(double x);
int bsp_minI_prefix(int x);
float bsp_minR_prefix(float x);
double bsp_minD_prefix(double x);

int bsp_maxI(int x);
float bsp_maxR(float x);
double bsp_maxD(double x);
int bsp_maxI_prefix(int x);
float bsp_maxR_prefix(float x);
double bsp_maxD_prefix(double x);

/* --- Sorting -------------------------------------------------------------------------------- */

/* bsp_sortX(x): the values of all processes, one each, sorted into increasing order; process i
 * gets the i-th smallest (duplicates kept: the result is a permutation of the values). This is
 * the Oxford toolset's definition: one value per process, C = a single char (compared as char),
 * not a string. float/double NaNs sort after every number. Collective; 2 supersteps,
 * h = (p-1)*sizeof(type), a sort of p values on every process. */
int bsp_sortI(int x);
float bsp_sortR(float x);
double bsp_sortD(double x);
char bsp_sortC(char x);

/* bspg_sort_blocks (a bspg extension, not in the Oxford toolset): sorts a distributed array with
 * any number of elements per process. Process i holds nelem_i elements of size bytes at base
 * (nelem may differ between processes and be 0; base may then be NULL); compare is as for
 * qsort. Afterwards the concatenation of all blocks in pid order is sorted and every process
 * still holds nelem_i elements: process i has the elements of ranks
 * nelem_0 + ... + nelem_(i-1) up to that plus nelem_i - 1. size must agree between processes.
 * Collective; 4 supersteps, h = (N - nelem_i)*size received by process i (N = all elements), a
 * sort of N elements on every process. */
void bspg_sort_blocks(void *base, int nelem, int size,
                      int (*compare)(const void *left, const void *right));

/* --- The machine's BSP parameters ----------------------------------------------------------- */
/* bsp_s: computing speed of one process, flop/s. bsp_l: latency of a superstep (barrier), in
 * flops (units of 1/s). bsp_g: cost of one word in an h-relation, in flops per word
 * (asymptotically, every process sending at once). bsp_nhalf: words per message at which the
 * cost per word is 2g (Hockney's n 1/2), that is ceil(l/g), at least 1.
 *
 * Not collective, no superstep: they may be called anywhere, also before bsp_begin. Their
 * values come from bspbench's saved results (benchmarks/bspbench writes PREFIX.dat, by default
 * ./bspbench.dat, or /tmp/bspbench.dat where the current directory is not writable; its lines
 * "# r = R flop/s" and "# bspg:    g = ... us = G flop, l = ... us = L flop" give s = R, g = G,
 * l = L). Looked for, once per process at the first call:
 *   1. the file named by the environment variable BSPG_BSPBENCH (BSPG_BSPBENCH=none: skip the
 *      files and take the defaults); a file named there that cannot be read or has no such
 *      lines stops the job with a message;
 *   2. ./bspbench.dat, then /tmp/bspbench.dat (files that are missing or lack the lines are
 *      passed over);
 *   3. otherwise fixed defaults, nothing measured, so that runs are repeatable: s = 1e9 flop/s,
 *      l = 10000 flop, g = 100 flop per word (the order of magnitude bspbench gives for bspg on a
 *      2-core machine with Open MPI 4.1), nhalf = 100.
 * Each process reads its own file: where processes run in different directories or on
 * different hosts, give all of them the same BSPG_BSPBENCH. */
double bsp_s(void);
double bsp_l(void);
double bsp_g(void);
int bsp_nhalf(void);

#ifdef __cplusplus
}
#endif

#endif /* BSP_LEVEL1_H */
