// bsp_level1.h from C++ (built with -Wall -Wextra -Werror): typed and generic operators through
// the bsp_fold/bsp_scan macros, a lambda converted to a function pointer, and the reductions.
#include <bsp_level1.h>

#include <cstdio>
#include <cstdlib>
#include <string>

static void max_len(std::size_t* res, std::size_t* left, std::size_t* right, int*) {
  *res = *left > *right ? *left : *right;
}

static void fail(const char* what) {
  std::printf("FAIL: process %d: %s\n", bsp_pid(), what);
  bsp_abort("l1_cxx: a check failed\n");
}

int main() {
  bsp_begin(bsp_nprocs());
  const int p = bsp_nprocs(), s = bsp_pid();
  std::size_t mine = std::string(static_cast<std::size_t>(s) + 1, 'x').size(), longest = 0;
  bsp_fold(max_len, &mine, &longest, sizeof mine);
  if (longest != static_cast<std::size_t>(p)) fail("fold with a typed operator");
  bsp_level1_op add = [](void* res, void* left, void* right, int*) {
    *static_cast<int*>(res) = *static_cast<int*>(left) + *static_cast<int*>(right);
  };
  int one = 1, count = 0;
  bsp_scan(add, &one, &count, sizeof one);
  if (count != s + 1) fail("scan with a lambda");
  if (bsp_sumD(0.5) != 0.5 * p) fail("bsp_sumD");
  if (bsp_sortC(static_cast<char>('z' - s)) != static_cast<char>('z' - (p - 1) + s)) fail("bsp_sortC");
  if (!(bsp_g() > 0)) fail("bsp_g");
  bsp_end();
  std::printf("PASS l1_cxx\n");
  return 0;
}
