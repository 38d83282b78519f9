// program_v1.cpp - a MulticoreBSP 1.x C++ program (mcbsp.hpp): mcbsp::BSP_program started with
// begin() and its default P, bsp_nprocs() (every process available), and mcbsp.h's types:
// MCBSP_PROCESSOR_INDEX_DATATYPE pids and MCBSP_BYTESIZE_TYPE sizes. Every process sends a tagged
// message of 8 * (pid + 1) bytes to every process; each receives them with bsp_get_tag and
// bsp_hpmove until bsp_get_tag's status and bsp_hpmove's result say the queue is empty
// (SIZE_MAX). Process 0 prints "PASS program_v1 on <P> processes".
#include <cstdio>
#include <cstring>

#include "mcbsp.hpp"

#define CHECK(ok, ...)                                                    \
  do {                                                                    \
    if (!(ok)) {                                                          \
      std::printf("FAIL: process %u, line %d: ", bsp_pid(), __LINE__);    \
      std::printf(__VA_ARGS__);                                           \
      std::printf("\n");                                                  \
      std::fflush(stdout);                                                \
      bsp_abort("program_v1: a check failed on process %u\n", bsp_pid()); \
    }                                                                     \
  } while (0)

class AllToAll : public mcbsp::BSP_program {
 public:
  AllToAll() : received(0) {}
  MCBSP_PROCESSOR_INDEX_DATATYPE received;

 protected:
  virtual void spmd() {
    const MCBSP_PROCESSOR_INDEX_DATATYPE P = bsp_nprocs(), me = bsp_pid();
    MCBSP_BYTESIZE_TYPE tagsize = sizeof me;
    bsp_set_tagsize(&tagsize);
    bsp_sync();
    double payload[64];
    for (MCBSP_PROCESSOR_INDEX_DATATYPE i = 0; i < 64; ++i) payload[i] = me + 0.5;
    for (MCBSP_PROCESSOR_INDEX_DATATYPE to = 0; to < P; ++to)
      bsp_send(to, &me, payload, sizeof(double) * (me + 1));
    bsp_sync();
    MCBSP_BYTESIZE_TYPE status = 0;
    MCBSP_PROCESSOR_INDEX_DATATYPE from = P;
    for (bsp_get_tag(&status, &from); status != SIZE_MAX; bsp_get_tag(&status, &from)) {
      void *tag = 0, *data = 0;
      const MCBSP_BYTESIZE_TYPE size = bsp_hpmove(&tag, &data);
      CHECK(size == status && size == sizeof(double) * (from + 1), "message from %u: %zu bytes",
            from, size);
      MCBSP_PROCESSOR_INDEX_DATATYPE tag_from;
      std::memcpy(&tag_from, tag, sizeof tag_from);
      double first;
      std::memcpy(&first, data, sizeof first);
      CHECK(tag_from == from && first == from + 0.5, "message from %u: tag %u, data %g", from,
            tag_from, first);
      ++received;
    }
    void *tag = 0, *data = 0;
    CHECK(bsp_hpmove(&tag, &data) == SIZE_MAX, "bsp_hpmove on an empty queue");
    CHECK(received == P, "%u messages, not %u", received, P);
  }

  virtual mcbsp::BSP_program *newInstance() { return new AllToAll(); }
};

int main() {
  AllToAll program;
  program.begin();
  std::printf("PASS program_v1 on %u processes\n", program.received);
  return 0;
}
