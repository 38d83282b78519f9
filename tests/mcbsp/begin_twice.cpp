// begin_twice.cpp - MulticoreBSP's C++ interface started more than once on one object:
// p.begin(P1); ... p.begin(); p.begin(P2). Every process runs main up to its first begin (each
// builds its own object), only process 0 after it; the other processes wait between sections and
// run each later one on newInstance() of their own object. Each section sums pid + 1 over its
// processes with puts into process 0's member and checks the sum; main checks what every section
// left. Process 0 prints "PASS begin_twice".
//   begin_twice P1 P2   (P1: every process there is)
#include <bsp.hpp>
#include <cstdio>
#include <cstdlib>

namespace {

// main's lines after the first begin, on each process (thread-local: not shared at bsp_begin)
thread_local int lines_of_main = 0;

class Summer : public mcbsp::BSP_program {
 public:
  explicit Summer(int base) : base_(base) {}
  int sections = 0, last_sum = -1, last_p = -1;

 protected:
  void spmd() override {
    const int p = static_cast<int>(bsp_nprocs()), s = static_cast<int>(bsp_pid());
    int sum_parts[64] = {0};
    bsp_push_reg(sum_parts, sizeof sum_parts);
    bsp_sync();
    const int mine = base_ + s + 1;
    bsp_put(0, &mine, sum_parts, s * static_cast<int>(sizeof(int)), sizeof mine);
    bsp_sync();
    if (s == 0) {
      int sum = 0;
      for (int q = 0; q < p; ++q) sum += sum_parts[q];
      if (sum != p * base_ + p * (p + 1) / 2) {
        std::printf("FAIL: section %d on %d: sum %d\n", sections, p, sum);
        std::fflush(stdout);
        bsp_abort("begin_twice: a wrong sum\n");
      }
      ++sections;
      last_sum = sum;
      last_p = p;
    }
    if (s != 0 && lines_of_main != 0) bsp_abort("FAIL: process %d ran main after begin\n", s);
    bsp_pop_reg(sum_parts);
    bsp_sync();
  }
  BSP_program *newInstance() override { return new Summer(base_); }

 private:
  int base_;
};

}  // namespace

int main(int argc, char **argv) {
  const unsigned first = argc > 1 ? std::atoi(argv[1]) : 2,
                 third = argc > 2 ? std::atoi(argv[2]) : 2;
  Summer program(10);
  program.begin(first);
  ++lines_of_main;
  const int p1 = program.last_p;
  program.begin();  // P = bsp_nprocs(): the last section's, as the standard says after bsp_end
  if (program.last_p != p1) {
    std::printf("FAIL: the second begin() had %d processes, not %d\n", program.last_p, p1);
    return 1;
  }
  program.begin(third);
  const int p3 = static_cast<int>(third) < p1 ? static_cast<int>(third) : p1;  // P1: all there are
  if (program.sections != 3 || program.last_p != p3) {
    std::printf("FAIL: %d sections, the last on %d (not %d)\n", program.sections, program.last_p,
                p3);
    return 1;
  }
  std::printf("PASS begin_twice\n");
  return 0;
}
