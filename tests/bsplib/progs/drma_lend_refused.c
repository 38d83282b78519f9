/* Where one process may not read another's memory (process_vm_readv refused, as a ptrace policy
 * would: here a seccomp filter fails it with EPERM in every process), no put is lent, even with
 * BSPG_LEND_PUTS=on: each is copied, and arrives. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "bsptest.h"

static void refuse_reading_others(void) {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {(unsigned short)(sizeof filter / sizeof *filter), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    printf("FAIL: could not install the seccomp filter (errno %d)\n", errno);
    exit(1);
  }
}

int main(void) {
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
  printf("PASS drma_lend_refused\n");
  return 0;
}
