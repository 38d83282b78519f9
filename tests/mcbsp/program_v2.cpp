// program_v2.cpp - a MulticoreBSP 2.x C++ program (bsp.hpp): a class derived from
// mcbsp::BSP_program with spmd() and newInstance(), started by begin(P). Checks that process 0
// runs spmd() on the object main built and every other process on one newInstance() made from
// its own process's object; that members work as registered memory (each process puts
// n * (pid + 1) into process 0's member array); that bsp.h's int typedefs and size_t both work
// with bsp_qsize and bsp_get_tag; and that main, after begin returns, sees what spmd() left in
// its object. Process 0 prints "PASS program_v2 on <P> processes".
//   program_v2 P N
#include <bsp.hpp>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(ok, ...)                                                    \
  do {                                                                    \
    if (!(ok)) {                                                          \
      std::printf("FAIL: process %u, line %d: ", bsp_pid(), __LINE__);    \
      std::printf(__VA_ARGS__);                                           \
      std::printf("\n");                                                  \
      std::fflush(stdout);                                                \
      bsp_abort("program_v2: a check failed on process %u\n", bsp_pid()); \
    }                                                                     \
  } while (0)

namespace {

const mcbsp::BSP_program *built_by_main = nullptr;
int instances_made = 0;

class ScaledSum : public mcbsp::BSP_program {
 public:
  explicit ScaledSum(size_t n) : n_(n), total_(0), nprocs_(0) {}
  size_t total() const { return total_; }
  unsigned int nprocs() const { return nprocs_; }

 protected:
  void spmd() override {
    const unsigned int P = bsp_nprocs(), me = bsp_pid();
    CHECK(me == 0 ? this == built_by_main : this != built_by_main,
          "spmd() ran on the wrong object");
    CHECK(instances_made == (me == 0 ? 0 : 1), "newInstance() ran %d times here", instances_made);
    CHECK(n_ == 1000, "n is %zu in this instance, not 1000", n_);
    parts_.assign(P, 0);
    bsp_push_reg(parts_.data(), P * sizeof(size_t));
    size_t tagsize = sizeof me;
    bsp_set_tagsize(&tagsize);
    CHECK(tagsize == 0, "bsp_set_tagsize gave back %zu as the old tag size", tagsize);
    bsp_sync();
    const size_t part = n_ * (me + 1);
    bsp_put(0, &part, parts_.data(), me * sizeof part, sizeof part);
    bsp_send(0, &me, &part, sizeof part);
    bsp_sync();
    bsp_nprocs_t count = -1;  // bspg's bsp.h: int; MulticoreBSP 2.x: unsigned
    bsp_size_t bytes = -1;
    bsp_qsize(&count, &bytes);
    unsigned int messages = 0;
    size_t message_bytes = 0;
    bsp_qsize(&messages, &message_bytes);
    CHECK(count == static_cast<int>(messages) && static_cast<size_t>(bytes) == message_bytes,
          "bsp_qsize: %d/%u messages, %d/%zu bytes", count, messages, bytes, message_bytes);
    CHECK(messages == (me == 0 ? P : 0), "%u messages", messages);
    if (me == 0) {
      for (unsigned int s = 0; s < P; ++s) total_ += parts_[s];
      nprocs_ = P;
    }
    for (;;) {
      bsp_size_t status = 0;
      unsigned int from = P;
      bsp_get_tag(&status, &from);
      size_t same_status = 0;
      bsp_get_tag(&same_status, &from);
      if (same_status == SIZE_MAX) {
        CHECK(status == -1, "bsp_get_tag with int status on an empty queue: %d", status);
        break;
      }
      size_t got = 0;
      bsp_move(&got, sizeof got);
      CHECK(got == n_ * (from + 1), "message from %u holds %zu", from, got);
    }
    bsp_pop_reg(parts_.data());
    bsp_sync();
  }

  mcbsp::BSP_program *newInstance() override {
    ++instances_made;
    return new ScaledSum(n_);
  }

 private:
  size_t n_;
  size_t total_;
  unsigned int nprocs_;
  std::vector<size_t> parts_;
};

}  // namespace

int main(int argc, char **argv) {
  const unsigned int P = argc > 1 ? static_cast<unsigned int>(std::atoi(argv[1])) : bsp_nprocs();
  ScaledSum program(argc > 2 ? static_cast<size_t>(std::atol(argv[2])) : 0);
  built_by_main = &program;
  program.begin(P);
  const size_t p = program.nprocs();
  if (p != P || program.total() != 1000 * p * (p + 1) / 2) {
    std::printf("FAIL: %zu processes (wanted %u), total %zu\n", p, P, program.total());
    return 1;
  }
  std::printf("PASS program_v2 on %zu processes\n", p);
  return 0;
}
