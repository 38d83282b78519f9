/* Where one process may not read another's memory (process_vm_readv refused, as a ptrace policy
 * would: here a seccomp filter fails it with EPERM in every process), or (argument
 * "no-userfaultfd") may not have a userfaultfd (the system call and /dev/userfaultfd refused, as
 * for a user without the rights), no put is lent, even with BSPG_LEND_PUTS=on: each is copied,
 * and arrives. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <mpi.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "bsptest.h"

#define REFUSE BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))

static void install(struct sock_filter *filter, unsigned short length) {
  struct sock_fprog program = {length, filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    printf("FAIL: could not install the seccomp filter (errno %d)\n", errno);
    exit(1);
  }
}

/* process_vm_readv fails with EPERM. */
static void refuse_reading_others(void) {
  struct sock_filter filter[] = {
      LOAD(nr),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
      REFUSE,
      ALLOW,
  };
  install(filter, sizeof filter / sizeof *filter);
}

/* userfaultfd() and /dev/userfaultfd's ioctl USERFAULTFD_IOC_NEW (_IO(0xAA, 0)) fail with EPERM. */
static void refuse_userfaultfd(void) {
  struct sock_filter filter[] = {
      LOAD(nr),      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_userfaultfd, 0, 1),
      REFUSE,        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 3),
      LOAD(args[1]), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xAA00, 0, 1),
      REFUSE,        ALLOW,
  };
  install(filter, sizeof filter / sizeof *filter);
}

int main(int argc, char **argv) {
  /* The MPI starts first, and bspg uses the MPI it finds: an MPI reads its peers' memory for its
   * own large messages too, and may wait for ever where it may not (CMakeLists.txt). */
  MPI_Init(&argc, &argv);
  if (argc > 1 && strcmp(argv[1], "no-userfaultfd") == 0)
    refuse_userfaultfd();
  else
    refuse_reading_others();
  test_begin(bsp_nprocs());
  const int p = bsp_nprocs(), me = bsp_pid();
  const size_t bytes = (size_t)1 << 20;
  unsigned char *area = test_alloc(bytes);
  unsigned char *source = aligned_alloc(4096, bytes);
  EXPECT(source != NULL, "aligned_alloc failed");
  bsp_push_reg(area, (int)bytes);
  bsp_sync();
  for (size_t i = 0; i < bytes; ++i) source[i] = (unsigned char)(me + i % 241);
  bsp_put((me + 1) % p, source, area, 0, (int)bytes);
  unsigned char in = 0;
  EXPECT(mincore(source + 4096, 4096, &in) == 0 && (in & 1),
         "a put was lent although no process may read another's memory");
  memset(source, 0, bytes);
  bsp_sync();
  const int left = (me + p - 1) % p;
  for (size_t i = 0; i < bytes; ++i)
    if (area[i] != (unsigned char)(left + i % 241))
      EXPECT_INT(area[i], (unsigned char)(left + i % 241), "byte %zu from process %d", i, left);
  bsp_pop_reg(area);
  bsp_sync();
  test_end();
  if (me == 0) printf("PASS drma_lend_refused\n"); /* every process goes on: MPI is the program's */
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
  return 0;
}
