// bspscale - how bspg's supersteps scale with p, against the cheapest raw MPI for the same
// traffic, in one run: an empty superstep against MPI_Allreduce, a sparse superstep against NBX,
// the metadata every process sends and receives per sync, peak memory of a large transfer, and the
// CPU a process burns while it waits at a sync. See --help.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "bench_support.h"
#include "bsp.h"
#include "bspg.h"

namespace bspg::bench {
extern const char kBspscaleManual[];
}

namespace {

constexpr const char* kProgram = "bspscale";
constexpr int kOpsPerRepetition = 16;  // an empty superstep is too short to time alone
constexpr int kWarmupRepetitions = 3;
constexpr int kNbxTag = 4711;

// --help prints the manual page, bspscale(1) (man/pages/bspscale.1.md), rendered as text at
// build time, so that the two cannot say different things.
const char* const kUsage = bspg::bench::kBspscaleManual;

struct Options : bench::CommonOptions {
  long k = 1;
  long large_mib = 256;
  double wait_s = 1.0;
  bool large_given = false, wait_given = false;
};

std::optional<int> parse_options(int argc, char** argv, Options& opt) {
  std::string error = bench::read_options(
      argc, argv, kProgram, opt,
      {bench::count("k", 1, 1000000, &opt.k),
       bench::count("large", 0, 2047, &opt.large_mib, &opt.large_given),  // BSPlib sizes: int
       {"wait", "number of seconds", [&](const std::string& value) {
          opt.wait_given = true;
          char* end = nullptr;
          const double seconds = std::strtod(value.c_str(), &end);
          if (value.empty() || *end != '\0' || !(seconds >= 0) || seconds > 60)
            return "--wait needs a number of seconds from 0 to 60, not '" + value + "'";
          opt.wait_s = seconds;
          return std::string();
        }}});
  if (opt.quick) {
    if (!opt.large_given) opt.large_mib = 16;
    if (!opt.wait_given) opt.wait_s = 0.5;
  }
  return bench::exit_before_begin(error, opt, kProgram, kUsage);
}

using Timing = bench::Alternation;

template <typename Bspg, typename Raw>
Timing time_alternating(long reps, Bspg bspg_once, Raw raw_once) {
  return bench::time_alternating(
      reps, kWarmupRepetitions, [&](int) { return bspg_once(); }, [&](int) { return raw_once(); });
}

void print_row(const char* label, const Timing& t, double target) {
  if (bsp_pid() != 0) return;
  std::printf("%-36s %12.2f %12.2f %8.2fx %7s%gx  %-4s %8.2fx\n", label, t.bspg_us, t.raw_us,
              t.ratio(), "<= ", target, t.ratio() <= target ? "PASS" : "FAIL", t.min_ratio());
  std::fflush(stdout);
}

// ---- (a) and (b) ------------------------------------------------------------------------------

Timing measure_empty(const Options& opt) {
  auto bspg_once = [] {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = bench::seconds_now();
    for (int i = 0; i < kOpsPerRepetition; ++i) bsp_sync();
    return (bench::seconds_now() - start) / kOpsPerRepetition;
  };
  auto raw_once = [] {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = bench::seconds_now();
    for (int i = 0; i < kOpsPerRepetition; ++i) {
      int in = 1, out = 0;
      MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    return (bench::seconds_now() - start) / kOpsPerRepetition;
  };
  return time_alternating(opt.reps, bspg_once, raw_once);
}

// One word to each of the k processes after this one; inbox[j] receives from the j-th before.
struct Sparse {
  int p, me, k;
  std::vector<long> inbox;
  long serial = 0;
  Sparse(int p_in, int me_in, int k_in)
      : p(p_in), me(me_in), k(k_in), inbox(static_cast<std::size_t>(k_in)) {
    bsp_push_reg(inbox.data(), k * static_cast<int>(sizeof(long)));
    bsp_sync();
  }
  ~Sparse() {
    bsp_pop_reg(inbox.data());
    bsp_sync();
  }
  long word(int from, int j) const { return serial * 1000003L + from * 1009L + j; }
  void check(const char* variant) {
    for (int j = 0; j < k; ++j) {
      const int from = ((me - 1 - j) % p + p) % p;
      if (inbox[static_cast<std::size_t>(j)] != word(from, j))
        bsp_abort("%s: (b) %s: process %d got %ld from process %d, expected %ld\n", kProgram,
                  variant, me, inbox[static_cast<std::size_t>(j)], from, word(from, j));
    }
  }
  double bspg_once() {
    ++serial;
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = bench::seconds_now();
    for (int j = 0; j < k; ++j) {
      const long w = word(me, j);
      bsp_put((me + 1 + j) % p, &w, inbox.data(), j * static_cast<int>(sizeof(long)),
              static_cast<int>(sizeof w));
    }
    bsp_sync();
    const double seconds = bench::seconds_now() - start;
    check("bsp_put + bsp_sync");
    return seconds;
  }
  // NBX: synchronous sends, probe for whatever arrives, a non-blocking barrier once our own
  // sends are matched; done when the barrier completes.
  double raw_once() {
    ++serial;
    std::vector<long> words(static_cast<std::size_t>(k));
    std::vector<MPI_Request> sends(static_cast<std::size_t>(k));
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = bench::seconds_now();
    for (int j = 0; j < k; ++j) {
      words[static_cast<std::size_t>(j)] = word(me, j);
      MPI_Issend(&words[static_cast<std::size_t>(j)], 1, MPI_LONG, (me + 1 + j) % p, kNbxTag + j,
                 MPI_COMM_WORLD, &sends[static_cast<std::size_t>(j)]);
    }
    MPI_Request barrier = MPI_REQUEST_NULL;
    bool in_barrier = false;
    for (;;) {
      int arrived = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &arrived, &status);
      if (arrived) {
        const int j = status.MPI_TAG - kNbxTag;
        MPI_Recv(&inbox[static_cast<std::size_t>(j)], 1, MPI_LONG, status.MPI_SOURCE,
                 status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      int done = 0;
      if (in_barrier) {
        MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
        if (done) break;
      } else {
        MPI_Testall(k, sends.data(), &done, MPI_STATUSES_IGNORE);
        if (done) {
          MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
          in_barrier = true;
        }
      }
    }
    const double seconds = bench::seconds_now() - start;
    check("NBX");
    return seconds;
  }
};

// ---- (c) ---------------------------------------------------------------------------------------

struct Metadata {
  double empty = 0, sparse = 0;  // bytes sent and received per process, largest over processes
};

Metadata measure_metadata(Sparse& sparse) {
  Metadata m;
  bsp_sync();
  bsp_sync();
  double empty = static_cast<double>(bspg_sync_metadata_bytes());
  sparse.bspg_once();
  double busy = static_cast<double>(bspg_sync_metadata_bytes());
  MPI_Allreduce(&empty, &m.empty, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&busy, &m.sparse, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

double reduction_rounds(double p) { return std::ceil(std::log2(p)); }

// The former design: every process all-gathered the whole schedule matrix, 8 + 3p words each.
double former_bytes(double p) { return (8 + 3 * p) * 8 * p; }

void print_metadata(const Metadata& m, int p, int k) {
  if (bsp_pid() != 0) return;
  std::printf("\n(c) metadata per process per sync (bytes sent + received), p = %d\n", p);
  std::printf("    empty superstep: %.0f    sparse (k = %d): %.0f    former design: %.0f\n",
              m.empty, k, m.sparse, former_bytes(p));
  if (p < 2) return;
  // Model from the sizes measured here: the reduction's bytes grow with its rounds, the
  // rest with the peers a process talks to.
  const double per_round = m.empty / reduction_rounds(p);
  const double per_peer =
      (m.sparse - m.empty) / (2.0 * k);  // each process sends k and receives k chunks
  std::printf("    from these sizes (%.0f bytes per reduction round, %.0f per peer talked to):\n",
              per_round, per_peer);
  std::printf("    %8s %14s %16s %18s\n", "p", "empty", "sparse (k = 1)", "former design");
  for (double q = 1024; q <= 65536; q *= 2) {
    const double empty = per_round * reduction_rounds(q);
    std::printf("    %8.0f %14.0f %16.0f %18.3g\n", q, empty, empty + 2 * per_peer,
                former_bytes(q));
  }
  std::fflush(stdout);
}

// ---- (d) ---------------------------------------------------------------------------------------

// Peak resident memory since the last reset, in bytes (VmHWM), and the reset (clear_refs 5).
double peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atof(line.c_str() + 6) * 1024;
  return 0;
}
bool reset_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.close();
  return static_cast<bool>(clear);
}

void measure_memory(const Options& opt) {
  const int p = bsp_nprocs(), me = bsp_pid();
  if (opt.large_mib == 0 || p < 2) {
    if (me == 0) std::printf("\n(d) memory: skipped (%s)\n", p < 2 ? "needs P >= 2" : "--large 0");
    return;
  }
  const std::size_t bytes = static_cast<std::size_t>(opt.large_mib) << 20;
  const int n = static_cast<int>(bytes);
  char* area = static_cast<char*>(std::malloc(bytes));
  if (!area) bsp_abort("%s: (d) cannot allocate %ld MiB\n", kProgram, opt.large_mib);
  if (me == 0) {
    std::printf(
        "\n(d) memory: one %ld MiB registered area from process 0 to process 1 (peak RSS / area)\n",
        opt.large_mib);
    std::printf("    %-10s %10s %10s %14s  %s\n", "call", "sender", "receiver", "targets",
                "result");
  }
  bsp_push_reg(area, n);
  bsp_sync();
  const char* calls[] = {"bsp_put", "bsp_hpput", "bsp_hpget"};
  const double sender_target[] = {2.25, 1.25, 1.25}, receiver_target = 1.25;
  for (int c = 0; c < 3; ++c) {
    std::memset(area, me == 0 ? 'a' + c : 'z', bytes);  // every page resident, data distinct
    bsp_sync();
    const bool reset = reset_peak_rss();
    MPI_Barrier(MPI_COMM_WORLD);
    if (c == 0 && me == 0) bsp_put(1, area, area, 0, n);
    if (c == 1 && me == 0) bsp_hpput(1, area, area, 0, n);
    if (c == 2 && me == 1) bsp_hpget(0, area, 0, area, n);
    bsp_sync();
    const double mine = peak_rss_bytes() / static_cast<double>(bytes);
    if (me == 1 && (area[0] != 'a' + c || area[bytes / 2] != 'a' + c || area[bytes - 1] != 'a' + c))
      bsp_abort("%s: (d) %s: process 1 did not receive the area\n", kProgram, calls[c]);
    std::vector<double> all = bench::gather_to_root(mine);
    if (me == 0) {
      const bool ok = all[0] <= sender_target[c] && all[1] <= receiver_target;
      std::printf("    %-10s %9.2fx %9.2fx %7g / %gx  %s%s\n", calls[c], all[0], all[1],
                  sender_target[c], receiver_target, ok ? "PASS" : "FAIL",
                  reset ? "" : "  (peak not reset: kernel without clear_refs 5)");
      std::fflush(stdout);
    }
  }
  bsp_pop_reg(area);
  bsp_sync();
  std::free(area);
}

// ---- (e) ---------------------------------------------------------------------------------------

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Process 0 sleeps while the others wait in `wait`; the others' CPU share of the wait.
template <typename Wait>
double waiting_cpu_share(double seconds, Wait wait) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double wall0 = bench::seconds_now(), cpu0 = cpu_seconds();
  if (bsp_pid() == 0) {
    timespec nap{static_cast<time_t>(seconds),
                 static_cast<long>((seconds - std::floor(seconds)) * 1e9)};
    nanosleep(&nap, nullptr);
  }
  wait();
  const double share = (cpu_seconds() - cpu0) / (bench::seconds_now() - wall0);
  double worst = bsp_pid() == 0 ? 0 : share, all = 0;
  MPI_Allreduce(&worst, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all;
}

void measure_idle(const Options& opt) {
  if (opt.wait_s <= 0 || bsp_nprocs() < 2) {
    if (bsp_pid() == 0)
      std::printf("\n(e) idle wait: skipped (%s)\n",
                  bsp_nprocs() < 2 ? "needs P >= 2" : "--wait 0");
    return;
  }
  const double bspg = waiting_cpu_share(opt.wait_s, [] { bsp_sync(); });
  const double raw = waiting_cpu_share(opt.wait_s, [] { MPI_Barrier(MPI_COMM_WORLD); });
  if (bsp_pid() == 0) {
    std::printf(
        "\n(e) idle wait of %.2f s at a sync: CPU of the waiting processes (worst) %.1f%% of a "
        "core in bsp_sync, "
        "%.1f%% in MPI_Barrier (target < 5%%)  %s\n",
        opt.wait_s, 100 * bspg, 100 * raw, bspg < 0.05 ? "PASS" : "FAIL");
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (const auto status = parse_options(argc, argv, opt)) return *status;

  bsp_begin(bsp_nprocs());
  bench::require_mpi_world(kProgram);
  const int p = bsp_nprocs();
  const int k = static_cast<int>(std::min<long>(opt.k, std::max(p - 1, 1)));
  if (bsp_pid() == 0) {
    std::printf(
        "bspscale: bspg against raw MPI in the same run, p = %d, %ld repetitions per row\n"
        "  (medians of the slowest process's time; bspg and raw MPI repetitions interleaved)\n",
        p, opt.reps);
    const std::string overload = bench::overload_note();
    if (!overload.empty())
      std::printf("  note: %s: other programs share the CPUs, medians scatter\n", overload.c_str());
    std::printf("\n%-36s %12s %12s %9s %9s  %-4s %9s\n", "case", "bspg (us)", "raw (us)", "ratio",
                "target", "", "min ratio");
  }
  print_row("(a) empty superstep vs MPI_Allreduce", measure_empty(opt), 2.0);
  {
    Sparse sparse(p, bsp_pid(), k);
    char label[64];
    std::snprintf(label, sizeof label, "(b) sparse superstep (k = %d) vs NBX", k);
    print_row(label,
              time_alternating(
                  opt.reps, [&] { return sparse.bspg_once(); }, [&] { return sparse.raw_once(); }),
              2.0);
    print_metadata(measure_metadata(sparse), p, k);
  }
  measure_memory(opt);
  measure_idle(opt);
  bsp_end();
  return 0;
}
