// netdelay - holds every packet of an iptables NFQUEUE queue for a fixed time, then lets it go: a
// wide-area link's delay between emulated sites, where the kernel has no sch_netem.
//
//   netdelay QUEUE DELAY_MS [READY_FILE]
//
// Packets sent to the queue (iptables ... -j NFQUEUE --queue-num QUEUE) are accepted DELAY_MS
// milliseconds after they arrived, in arrival order. READY_FILE is created once the queue is bound,
// so that a script can wait for it before it sends traffic. Ends on SIGTERM or SIGINT, accepting
// what it still holds. A test helper (tests/launcher/emuhosts.sh, EMU_SITES); not installed.
// glibc's network headers before libnetfilter_queue's, which would bring the kernel's <linux/in.h>.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include <libnetfilter_queue/libnetfilter_queue.h>
#ifndef NF_ACCEPT
#define NF_ACCEPT 1  // <linux/netfilter.h>'s verdict
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;

struct Held {
  Clock::time_point release;
  std::uint32_t id;
};

struct State {
  std::deque<Held> held;  // in arrival order, so also in release order (one delay for all)
  Clock::duration delay{};
};

volatile std::sig_atomic_t stop_requested = 0;
void on_signal(int) { stop_requested = 1; }

int on_packet(nfq_q_handle*, nfgenmsg*, nfq_data* data, void* state_pointer) {
  auto* state = static_cast<State*>(state_pointer);
  const nfqnl_msg_packet_hdr* header = nfq_get_msg_packet_hdr(data);
  if (header != nullptr)
    state->held.push_back({Clock::now() + state->delay, ntohl(header->packet_id)});
  return 0;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "netdelay: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

// Accepts every held packet due by now: one verdict for all of them (ids grow with arrival).
void release_due(nfq_q_handle* queue, State& state, bool everything) {
  const auto now = Clock::now();
  std::uint32_t last = 0;
  bool any = false;
  while (!state.held.empty() && (everything || state.held.front().release <= now)) {
    last = state.held.front().id;
    any = true;
    state.held.pop_front();
  }
  if (any) nfq_set_verdict_batch(queue, last, NF_ACCEPT);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: netdelay QUEUE DELAY_MS [READY_FILE]\n");
    return 2;
  }
  char* end = nullptr;
  const long queue_number = std::strtol(argv[1], &end, 10);
  if (*end != '\0' || queue_number < 0 || queue_number > 65535) {
    std::fprintf(stderr, "netdelay: QUEUE must be 0 to 65535, not '%s'\n", argv[1]);
    return 2;
  }
  const double delay_ms = std::strtod(argv[2], &end);
  if (*end != '\0' || !(delay_ms >= 0) || delay_ms > 10000) {
    std::fprintf(stderr, "netdelay: DELAY_MS must be 0 to 10000, not '%s'\n", argv[2]);
    return 2;
  }
  State state;
  state.delay = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double, std::milli>(delay_ms));

  nfq_handle* handle = nfq_open();
  if (handle == nullptr) die("cannot open the netfilter queue interface");
  nfq_unbind_pf(handle, AF_INET);  // older kernels want this; newer ones ignore it
  if (nfq_bind_pf(handle, AF_INET) < 0) die("cannot bind to IPv4");
  nfq_q_handle* queue =
      nfq_create_queue(handle, static_cast<std::uint16_t>(queue_number), &on_packet, &state);
  if (queue == nullptr) die("cannot bind queue " + std::string(argv[1]));
  if (nfq_set_mode(queue, NFQNL_COPY_META, 0) < 0) die("cannot set the copy mode");
  nfq_set_queue_maxlen(queue, 1u << 20);
  const int fd = nfq_fd(handle);
  // A large receive buffer: packets announced while we sleep must not be lost (a lost
  // announcement is still accepted by the next batch verdict, but only once a later one comes).
  const int buffer_bytes = 16 << 20;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer_bytes, sizeof buffer_bytes);

  struct sigaction action {};
  action.sa_handler = on_signal;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);

  if (argc == 4) {
    FILE* ready = std::fopen(argv[3], "w");
    if (ready == nullptr) die(std::string("cannot create ") + argv[3]);
    std::fclose(ready);
  }

  alignas(8) static char packet[1 << 17];
  while (!stop_requested) {
    long long wait_ns = 100 * 1000 * 1000;
    if (!state.held.empty()) {
      const auto wait = state.held.front().release - Clock::now();
      wait_ns = std::max<long long>(
          0, std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count());
    }
    const timespec timeout{static_cast<time_t>(wait_ns / 1000000000),
                           static_cast<long>(wait_ns % 1000000000)};
    pollfd ready{fd, POLLIN, 0};
    const int n = ppoll(&ready, 1, &timeout, nullptr);
    if (n > 0) {
      // Everything the kernel has for us now.
      for (;;) {
        const ssize_t got = recv(fd, packet, sizeof packet, MSG_DONTWAIT);
        if (got < 0) break;  // EAGAIN, or ENOBUFS (see the receive buffer above)
        nfq_handle_packet(handle, packet, static_cast<int>(got));
      }
    } else if (n < 0 && errno != EINTR) {
      die("poll");
    }
    release_due(queue, state, false);
  }
  release_due(queue, state, true);
  nfq_destroy_queue(queue);
  nfq_close(handle);
  return 0;
}
