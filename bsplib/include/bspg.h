/* bspg.h - bspg extensions to BSPlib (prefix bspg_). Include after or instead of bsp.h. */
#ifndef BSPG_H
#define BSPG_H

#include <stddef.h>

#include "bsp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Subjobs: bsprun groups the processes of one host or site into a subjob and tells each
 * process its index (environment BSPG_SUBJOB). Without bsprun's grid path there is one
 * subjob holding every process. Valid inside the SPMD section. O(1). */
int bspg_subjob(void);         /* this process's subjob, 0 <= k < bspg_nsubjobs() */
int bspg_nsubjobs(void);       /* number of subjobs */
int bspg_subjob_nprocs(int k); /* processes in subjob k */

/* Groups: processes that synchronise on their own, cheaper than bsp_sync when a superstep's
 * communication stays inside the group. A group superstep ends with bspg_group_sync(g), called
 * by every member of g (and by no one else); its puts, gets and messages must address members
 * of g only, and it may not push or pop registrations or change the tag size (those take effect
 * at bsp_sync). Messages received at a group sync replace the queue, as at bsp_sync.
 * Handles are the same number on every member. Group BSPG_ALL holds every process:
 * bspg_group_sync(BSPG_ALL) is bsp_sync. */
#define BSPG_ALL 0

/* Collective over all processes, effective at once: processes passing equal color >= 0 form a
 * group, ordered by pid. Returns its handle; color < 0 joins no group and returns -1. O(l). */
int bspg_group_split(int color);

/* The group of this process's subjob (made at bsp_begin). O(1). */
int bspg_subjob_group(void);

/* End a superstep of the members of group. O(g*h + l_group). */
void bspg_group_sync(int group);

/* Bytes of metadata this process sent and received at its last sync (bsp_sync or a group sync):
 * chunk headers, the fetch-and-add that places each chunk, and its share of the sync's reduction
 * (recursive doubling: about 2 log2(p) times a few dozen words), but not the data itself. An
 * empty superstep costs O(log p) bytes, one that talks to k peers O(k + log p). O(1). */
size_t bspg_sync_metadata_bytes(void);

/* Bytes this process sent at its last sync to processes of other subjobs (sites): the data of
 * its puts, gets' requests and replies, and messages to them, with their chunk headers; not the
 * sync's reduction. 0 where a superstep stayed inside the subjob, which bspg_group_sync of
 * bspg_subjob_group() would then have ended without a wide-area round trip. O(1). */
size_t bspg_sync_cross_subjob_bytes(void);

/* Superstep checkpoints: a job outlives the hosts it runs on (bsprun --restarts, --resume).
 * bspg_persist declares an area that every checkpoint saves; a process declares its areas in the
 * same order on every run, typically right after allocating them. Local. O(1). */
void bspg_persist(void *addr, size_t nbytes);

/* Collective. On a fresh run returns 0 and does nothing else. On a resumed run (bsprun sets
 * BSPG_RESUME) fills every persisted area with its contents at the last complete checkpoint, gives
 * back the message queue and tag size in force there, and returns that checkpoint's number (1, 2,
 * ...); its registrations must be in force again (push_reg and bsp_sync first). A mismatch (other
 * areas or sizes, other registrations, another number of processes) stops the job with a message.
 * A damaged shard is said and its buddy's copy used. O(size of the persisted areas). */
int bspg_resume(void);

/* Collective. Ends the superstep exactly as bsp_sync does, then saves every process's persisted
 * areas and just-delivered message queue as checkpoint n (n = 1, 2, ... after the last one written
 * or restored), and returns n: each process writes its shard to its host's checkpoint directory
 * and sends a copy to a buddy process on another host, and the checkpoint counts only once every
 * shard and copy is written and fsync'ed everywhere; the one before is removed then. O(bytes
 * persisted / disk bandwidth + same / network bandwidth + l).
 * A resumed run starts the program again and goes on from bspg_resume with the state that
 * bspg_checkpoint saved: make the checkpoint the last thing of a loop iteration, and keep in
 * persisted areas all that later supersteps read (the loop counter, and registered areas that
 * puts land in). */
int bspg_checkpoint(void);

int bspg_group_nprocs(int group);           /* members of group */
int bspg_group_pid(int group);              /* this process's rank in group, 0..nprocs-1 */
int bspg_group_member(int group, int rank); /* bsp_pid() of the member with that rank */

#ifdef __cplusplus
}
#endif

#endif /* BSPG_H */
