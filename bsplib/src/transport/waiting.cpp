// waiting.cpp - idle waiting: polls first, then sleeps between polls (wait_idle, IdlePacer).
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <ctime>

#include "lost_peers.hpp"
#include "transport.hpp"

namespace bspg {
namespace {

// Idle waiting: poll first, as MPI's own waits do (yielding the core when Open MPI's
// mpi_yield_when_idle is set, as it is when processes outnumber cores), then sleep between polls,
// the pause doubling up to a cap that bounds the latency a long wait adds (at 1 ms a waiting
// process polls 1000 times a second, well under 1% of a core). How long to poll adapts: three
// times a typical recent wait (each counted at most 5 ms), from 1 ms to 15 ms, so that a sync whose
// peers are all there finishes while polling even where a collective takes milliseconds (many
// processes per core), and a wait of one second for a late peer costs at most about 2% of a core.
constexpr double kMinSpinSeconds = 1e-3, kMaxSpinSeconds = 15e-3, kWaitSampleCap = 5e-3;
constexpr long kFirstPauseNs = 50 * 1000;
constexpr long kMaxPauseNs = 1000 * 1000;
double typical_wait_seconds = 0;  // exponentially weighted average of recent waits (capped)
bool yield_between_polls = false;  // processes_on_this_node()

// One poll of the requests; true when all are complete.
inline bool poll(int n, MPI_Request* requests) {
  lost_peers::check();  // a wait whose peer is lost never ends by itself (with spares only)
  int done = 0;
  MPI_Testall(n, requests, &done, MPI_STATUSES_IGNORE);
  if (!done && yield_between_polls) sched_yield();
  return done != 0;
}

}  // namespace

void processes_on_this_node(int count) {
#if defined(OPEN_MPI)
  (void)count;  // Open MPI yields in its own polls when its mpirun sees more processes than cores
#else
  cpu_set_t cpus;
  const int cores = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  yield_between_polls = count > cores;
#endif
}

void wait_any_idle(int n, MPI_Request* requests, int* index) {
  IdlePacer pacer;
  for (;;) {
    int done = 0;
    MPI_Testany(n, requests, index, &done, MPI_STATUS_IGNORE);
    if (done) return;
    lost_peers::check();
    pacer.idle();
  }
}

void wait_idle(int n, MPI_Request* requests, const std::function<void()>* also) {
  const auto poll_once = [also](int count, MPI_Request* r) {
    if (also) (*also)();
    return poll(count, r);
  };
  // A sync whose peers are all there ends within a few polls: no clock for those (reading it
  // costs about as much as a poll), and they count as waits of no length.
  for (int polls = 0; polls < 256; ++polls) {
    if (poll_once(n, requests)) {
      typical_wait_seconds *= 0.9;
      return;
    }
  }
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto finished = [&] {
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    typical_wait_seconds = 0.9 * typical_wait_seconds + 0.1 * std::min(waited, kWaitSampleCap);
  };
  const double spin = std::clamp(3 * typical_wait_seconds, kMinSpinSeconds, kMaxSpinSeconds);
  const auto spin_until =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(spin));
  do {
    // The clock only every 16 polls: reading it costs about as much as a poll.
    for (int polls = 0; polls < 16; ++polls)
      if (poll_once(n, requests)) return finished();
  } while (Clock::now() < spin_until);
  long pause = kFirstPauseNs;
  for (;;) {
    timespec sleep_for{0, pause};
    nanosleep(&sleep_for, nullptr);
    if (poll_once(n, requests)) return finished();
    pause = std::min(pause * 2, kMaxPauseNs);
  }
}

void IdlePacer::idle() {
  lost_peers::check();
  const long long now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
  if (idle_since_ns_ == 0) idle_since_ns_ = now;
  if (now - idle_since_ns_ < static_cast<long long>(kMinSpinSeconds * 1e9)) {
    if (yield_between_polls) sched_yield();
    return;
  }
  pause_ns_ = pause_ns_ ? std::min(pause_ns_ * 2, kMaxPauseNs) : kFirstPauseNs;
  timespec sleep_for{0, pause_ns_};
  nanosleep(&sleep_for, nullptr);
}

}  // namespace bspg
