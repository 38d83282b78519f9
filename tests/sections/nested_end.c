// nested_end HOW: a nested run that ends otherwise than with bsp_end. Outer pid 0 starts a nested
// run of 2 processes; the other outer processes go to the outer bsp_end. HOW:
//   exit0          the nested run's pid 0 (outer pid 0 too) calls exit(0), while the other outer
//                  processes wait in bsp_end: the nested run and then the outer section end as
//                  bsp_end would, one line each; status 0
//   exit0_spawned  the nested run's pid 1 calls exit(0): the nested run ends as bsp_end would,
//                  one line; the outer section goes on (PASS, status 0)
//   exit3          the nested run's pid 0 calls exit(3): one line naming it; status 3
//   exit3_spawned  the nested run's pid 1 calls exit(3): one line naming it; status 3
//   return         the nested part returns without bsp_end on its processes but pid 0, whose
//                  bsp_end meets them: one line; the outer section goes on (PASS, status 0)
//   checkpoint     the nested run's processes call bspg_checkpoint, and
//   persist        its pid 1 calls bspg_persist: one line says checkpoints are not supported
//                  inside a nested run; non-zero status
#include <bsp.h>
#include <bspg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* how = "";

static int is(const char* name) { return strcmp(how, name) == 0; }

static void nested(void) {
  bsp_begin(2);
  const int s = bsp_pid();
  int box = -1;
  bsp_push_reg(&box, sizeof box);
  bsp_sync();
  if (is("checkpoint")) bspg_checkpoint();
  if (s == 1 && is("persist")) bspg_persist(&box, sizeof box);
  const int seven = 7;
  if (s == 1) bsp_put(0, &seven, &box, 0, sizeof seven);  // pending at the end
  fflush(stdout);
  if (s == 0 && is("exit0")) exit(0);
  if (s == 1 && is("exit0_spawned")) exit(0);
  if (s == 0 && is("exit3")) exit(3);
  if (s == 1 && is("exit3_spawned")) exit(3);
  if (s == 1 && is("return")) return;  // without bsp_end
  bsp_end();
}

static void outer(void) {
  bsp_begin(bsp_nprocs());
  const int op = bsp_pid();
  int box = -1;
  bsp_push_reg(&box, sizeof box);
  bsp_sync();
  if (op != 0 && is("exit0")) {
    bsp_end();  // where outer pid 0's exit ends the outer section as bsp_end would
    return;
  }
  if (op == 0) {
    bsp_init(nested, 0, NULL);
    nested();
    if (!is("exit0_spawned") && !is("return"))
      printf("FAIL nested_end %s: the outer section went on\n", how);
    if (bsp_nprocs() < 1 || bsp_pid() != 0) printf("FAIL nested_end %s: not outer pid 0\n", how);
  }
  const int one = 1;
  if (bsp_nprocs() > 1) bsp_put((op + 1) % bsp_nprocs(), &one, &box, 0, sizeof one);
  bsp_sync();
  if (bsp_nprocs() > 1 && box != 1) printf("FAIL nested_end %s: outer put lost\n", how);
  if (op == 0) printf("PASS nested_end\n");
  bsp_end();
}

int main(int argc, char** argv) {
  how = argc > 1 ? argv[1] : "";
  bsp_init(outer, argc, argv);
  outer();
  return 0;
}
