/* mcbsp-affinity.h - MulticoreBSP for C's affinity interface, accepted so that programs that tune
 * MulticoreBSP's thread pinning build and run unchanged. MulticoreBSP documents these settings as
 * hints on how to pin its threads; bspg runs processes where the MPI starter or bsprun places
 * them, so every setter is accepted and ignored. The getters report what bspg uses: the processes
 * available (bsp_nprocs()) as threads and as cores, one thread per core, CONSECUTIVE numbering,
 * the last affinity mode set (SCATTER, MulticoreBSP's default, until then), no manual pinning and
 * no reserved cores. Not collective; O(1). */
#ifndef BSPG_MCBSP_AFFINITY_H
#define BSPG_MCBSP_AFFINITY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum mcbsp_affinity_mode { SCATTER = 0, COMPACT, MANUAL };

enum mcbsp_thread_numbering { CONSECUTIVE = 0, WRAPPED };

void mcbsp_set_maximum_threads(const size_t max);
void mcbsp_set_affinity_mode(const enum mcbsp_affinity_mode mode);
void mcbsp_set_available_cores(const size_t num_cores);
void mcbsp_set_threads_per_core(const size_t threads_per_core);
void mcbsp_set_thread_numbering(const enum mcbsp_thread_numbering numbering);
/* pinning and reserved are read by MulticoreBSP, never kept: here they are not read at all. */
void mcbsp_set_pinning(const size_t *const pinning, const size_t length);
void mcbsp_set_reserved_cores(const size_t *const reserved, const size_t length);

size_t mcbsp_get_maximum_threads(void);
enum mcbsp_affinity_mode mcbsp_get_affinity_mode(void);
size_t mcbsp_get_available_cores(void);
size_t mcbsp_get_threads_per_core(void);
enum mcbsp_thread_numbering mcbsp_get_thread_numbering(void);
size_t *mcbsp_get_pinning(void);              /* NULL: no manual pinning */
size_t mcbsp_get_reserved_cores_number(void); /* 0 */
size_t *mcbsp_get_reserved_cores(void);       /* NULL: none reserved */

#ifdef __cplusplus
}
#endif

#endif /* BSPG_MCBSP_AFFINITY_H */
