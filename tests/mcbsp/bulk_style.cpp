// bulk_style.cpp - the way Bulk's MulticoreBSP backend starts its SPMD part: mcbsp.h in
// compatibility mode (int types) inside extern "C", and a C++ callable passed through
// bsp_init_with_user_data to a captureless lambda that runs bsp_begin, the callable and bsp_end.
// The callable runs a ring of puts; process 0 prints "PASS bulk_style on <P> processes".
//   bulk_style P
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <type_traits>

extern "C" {
#define MCBSP_COMPATIBILITY_MODE
#include <mcbsp.h>
}

static_assert(std::is_same<MCBSP_BYTESIZE_TYPE, int>::value, "compatibility mode sizes are int");
static_assert(std::is_same<decltype(bsp_pid()), int>::value, "compatibility mode pids are int");

namespace {

using SpmdBody = std::function<void(int pid, int nprocs)>;

struct Launch {
  int processes;
  SpmdBody *body;
};

void run(int processes, SpmdBody body) {
  auto start = [](void *data) {
    Launch *launch = static_cast<Launch *>(data);
    bsp_begin(launch->processes);
    (*launch->body)(bsp_pid(), bsp_nprocs());
    bsp_end();
  };
  Launch launch{processes, &body};
  bsp_init_with_user_data(start, 0, nullptr, &launch);
  start(&launch);
}

}  // namespace

int main(int argc, char **argv) {
  const int wanted = argc > 1 ? std::atoi(argv[1]) : bsp_nprocs();
  int seen_nprocs = 0;
  run(wanted, [&](int pid, int nprocs) {
    int from_left = -1;
    bsp_push_reg(&from_left, sizeof from_left);
    bsp_sync();
    bsp_put((pid + 1) % nprocs, &pid, &from_left, 0, sizeof pid);
    bsp_sync();
    if (from_left != (pid + nprocs - 1) % nprocs) {
      std::printf("FAIL: process %d got %d from its left\n", pid, from_left);
      std::fflush(stdout);
      bsp_abort("bulk_style: a check failed on process %d\n", pid);
    }
    int messages = -1, bytes = -1;
    bsp_qsize(&messages, &bytes);
    if (messages != 0 || bytes != 0) bsp_abort("bulk_style: queue %d %d\n", messages, bytes);
    bsp_pop_reg(&from_left);
    bsp_sync();
    if (pid == 0) seen_nprocs = nprocs;
  });
  if (seen_nprocs != wanted) {
    std::printf("FAIL: the section had %d processes, not %d\n", seen_nprocs, wanted);
    return 1;
  }
  std::printf("PASS bulk_style on %d processes\n", seen_nprocs);
  return 0;
}
