// lost_peers.cpp - the loss handler on the job's communicators, the sentinel receive that bspg's
// own waits test, and the revocation that brings every process of the job to its recovery point.
#include "lost_peers.hpp"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#if defined(BSPG_HAVE_ULFM)
#include <mpi-ext.h>
#endif

namespace bspg::lost_peers {

bool g_watching = false;

namespace {

LossHandler handler = nullptr;
MPI_Comm sentinel_comm = MPI_COMM_NULL;
MPI_Request sentinel = MPI_REQUEST_NULL;
int sentinel_word = 0;
long long last_check_ns = 0;
MPI_Errhandler comm_handler = MPI_ERRHANDLER_NULL;
int list_key = MPI_KEYVAL_INVALID;
std::vector<MPI_Comm> watched;       // communicators to revoke on a loss
constexpr int kSentinelTag = 32000;  // below every MPI's MPI_TAG_UB (at least 32767)
constexpr int kLeavingTag = 32003;   // barrier_before_leaving's, on the job's communicator
constexpr long long kCheckEveryNs = 1000 * 1000;
void (*before_release)() = nullptr;

long long now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

[[noreturn]] void fatal(int code, const char* where) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  std::fprintf(stderr, "bspg: MPI error in %s: %s\n", where, text);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  __builtin_unreachable();
}

void on_comm_error(MPI_Comm* /*comm*/, int* code, ...) {
  int error_class = 0;
  MPI_Error_class(*code, &error_class);
  if (!is_loss(error_class)) fatal(*code, "a communicator of the job");
  if (handler == nullptr) return;  // ignore_losses: the job has ended
  handler("an MPI call");
}

// Attribute delete callback: a watched communicator being freed leaves the list.
int forget(MPI_Comm comm, int /*key*/, void* /*value*/, void* /*extra*/) {
  watched.erase(std::remove(watched.begin(), watched.end(), comm), watched.end());
  return MPI_SUCCESS;
}

// Until every request is done or failed (a failed one: its peer was lost), sleeping between
// tests: the others may take a while to come, and this must not take their core.
void wait_or_lost(std::vector<MPI_Request>& requests) {
  for (;;) {
    bool all_done = true;
    for (MPI_Request& request : requests) {
      if (request == MPI_REQUEST_NULL) continue;
      int done = 0;
      if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        request = MPI_REQUEST_NULL;  // abandoned: the process leaves right after
        continue;
      }
      all_done = all_done && done;
    }
    if (all_done) return;
    const timespec pause{0, 500000};
    nanosleep(&pause, nullptr);
  }
}

}  // namespace

bool is_loss(int error_class) {
#if defined(BSPG_HAVE_ULFM)
  return error_class == MPIX_ERR_PROC_FAILED || error_class == MPIX_ERR_PROC_FAILED_PENDING ||
         error_class == MPIX_ERR_REVOKED;
#else
  (void)error_class;
  return false;
#endif
}

void enable(MPI_Comm sentinel_over, LossHandler on_loss) {
  handler = on_loss;
  if (comm_handler == MPI_ERRHANDLER_NULL) MPI_Comm_create_errhandler(on_comm_error, &comm_handler);
  if (list_key == MPI_KEYVAL_INVALID)
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, forget, &list_key, nullptr);
  watched.clear();
  sentinel_comm = sentinel_over;
  watch(sentinel_comm);
  MPI_Irecv(&sentinel_word, 1, MPI_INT, MPI_ANY_SOURCE, kSentinelTag, sentinel_comm, &sentinel);
  last_check_ns = now_ns();
  g_watching = true;
}

bool enabled() { return handler != nullptr && g_watching; }

void watch(MPI_Comm comm) {
  if (!g_watching && sentinel_comm == MPI_COMM_NULL) return;
  if (comm == MPI_COMM_NULL || handler == nullptr) return;
  MPI_Comm_set_errhandler(comm, comm_handler);
  if (std::find(watched.begin(), watched.end(), comm) != watched.end()) return;
  watched.push_back(comm);
  MPI_Comm_set_attr(comm, list_key, nullptr);
}

void check_slow() {
  const long long now = now_ns();
  if (now - last_check_ns < kCheckEveryNs) return;
  last_check_ns = now;
  int done = 0;
  const int rc = MPI_Test(&sentinel, &done, MPI_STATUS_IGNORE);
  // The handler on the sentinel's communicator runs for a failed test; a message on this tag
  // is nobody's (none is ever sent): it is a failure all the same.
  if (rc == MPI_SUCCESS && done && handler) handler("a wait");
}

void stop_watching() { g_watching = false; }

void ignore_losses() {
  g_watching = false;
  handler = nullptr;
}

void set_before_release(void (*hook)()) { before_release = hook; }

void barrier_before_leaving(MPI_Comm comm) {
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<MPI_Request> requests;
  if (rank == 0) {
    requests.assign(static_cast<std::size_t>(size - 1), MPI_REQUEST_NULL);
    for (int q = 1; q < size; ++q)
      MPI_Irecv(nullptr, 0, MPI_BYTE, q, kLeavingTag, comm,
                &requests[static_cast<std::size_t>(q - 1)]);
    wait_or_lost(requests);
    if (before_release != nullptr) before_release();
    for (int q = 1; q < size; ++q)  // each waits for this: none has left
      MPI_Send(nullptr, 0, MPI_BYTE, q, kLeavingTag, comm);
    return;
  }
  requests.assign(1, MPI_REQUEST_NULL);
  if (MPI_Send(nullptr, 0, MPI_BYTE, 0, kLeavingTag, comm) != MPI_SUCCESS) return;  // 0 is lost
  MPI_Irecv(nullptr, 0, MPI_BYTE, 0, kLeavingTag, comm, &requests[0]);
  wait_or_lost(requests);
}

void revoke_all() {
  g_watching = false;
#if defined(BSPG_HAVE_ULFM)
  const std::vector<MPI_Comm> all = watched;
  for (MPI_Comm comm : all) MPIX_Comm_revoke(comm);
#endif
  sentinel = MPI_REQUEST_NULL;  // abandoned with its communicator
}

}  // namespace bspg::lost_peers
