// A BSPlib program written in C++, compiled by the test with bspcxx: bsp.h must work from C++
// (extern "C" linkage). Each process sends its pid around the ring with bsp_send and collects
// all pids in a std::vector over p supersteps.
#include <bsp.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <vector>

int main() {
  bsp_begin(bsp_nprocs());
  const int p = bsp_nprocs(), me = bsp_pid();
  std::vector<int> seen{me};
  int token = me;
  for (int step = 1; step < p; ++step) {
    bsp_send((me + 1) % p, nullptr, &token, sizeof token);
    bsp_sync();
    int status = -1;
    bsp_get_tag(&status, nullptr);
    if (status != static_cast<int>(sizeof token))
      bsp_abort("FAIL: ring: process %d got status %d\n", me, status);
    bsp_move(&token, sizeof token);
    seen.push_back(token);
  }
  std::sort(seen.begin(), seen.end());
  std::vector<int> want(p);
  std::iota(want.begin(), want.end(), 0);
  if (seen != want) bsp_abort("FAIL: ring: process %d did not see every pid once\n", me);
  bsp_sync();
  bsp_end();
  std::printf("PASS ring %d\n", p);
  return 0;
}
