/* bspg.h - bspg extensions to BSPlib (prefix bspg_). Include after or instead of bsp.h. */
#ifndef BSPG_H
#define BSPG_H

#include "bsp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Subjobs: bsprun groups the processes of one host or site into a subjob and tells each
 * process its index (environment BSPG_SUBJOB). Without bsprun's grid path there is one
 * subjob holding every process. Valid inside the SPMD section. O(1). */
int bspg_subjob(void);             /* this process's subjob, 0 <= k < bspg_nsubjobs() */
int bspg_nsubjobs(void);           /* number of subjobs */
int bspg_subjob_nprocs(int k);     /* processes in subjob k */

#ifdef __cplusplus
}
#endif

#endif /* BSPG_H */
