// bspwan - supersteps across sites: bspg against plain MPI on the same processes, in one run, for
// the cases a program spread over a wide area meets (see --help). Meant for a job of two subjobs
// (bsprun's sites) with a delay between them; benchmarks/wan_sites.sh runs it on emulated sites.
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bench_support.h"
#include "bsp.h"
#include "bspg.h"
#include "safe_paths.h"

namespace bspg::bench {
extern const char kBspwanManual[];
}

namespace {

constexpr const char* kProgram = "bspwan";
constexpr int kWarmupRepetitions = 1;

// --help prints the manual page, bspwan(1) (man/pages/bspwan.1.md), rendered as text at
// build time, so that the two cannot say different things.
const char* const kUsage = bspg::bench::kBspwanManual;

struct Options : bench::CommonOptions {
  std::string csv;
  long words = 1000;
  std::set<std::string> cases;  // --cases: the rows to run (empty: all)
  bool runs(const char* name) const { return cases.empty() || cases.count(name) > 0; }
};

const std::vector<std::string> kCases = {"sync",   "put",   "get",  "get8k",
                                         "get64k", "get1m", "bulk", "group"};

std::optional<int> parse_options(int argc, char** argv, Options& opt) {
  const std::string error = bench::read_options(
      argc, argv, kProgram, opt,
      {bench::text("csv", "file name", &opt.csv), bench::count("words", 1, 1000000, &opt.words),
       bench::cases(kCases, &opt.cases)});
  if (opt.quick && !opt.reps_given) opt.reps = 3;
  if (!opt.quick && !opt.reps_given) opt.reps = 11;
  return bench::exit_before_begin(error, opt, kProgram, kUsage);
}

// Who is where: subjobs are the sites; the partner is the same rank in the next subjob.
struct Layout {
  int pid = 0, nprocs = 1, subjob = 0, nsubjobs = 1;
  int partner = 0;        // in the next subjob (or this process, with one subjob)
  int next_in_site = 0;   // the next process of this subjob (cyclically)
  MPI_Comm site = MPI_COMM_NULL;  // the subjob's processes, for plain MPI's group case
};

Layout find_layout() {
  Layout l;
  l.pid = bsp_pid();
  l.nprocs = bsp_nprocs();
  l.subjob = bspg_subjob();
  l.nsubjobs = bspg_nsubjobs();
  // Subjob members in pid order (every process knows every process's subjob).
  std::vector<int> subjob_of(static_cast<std::size_t>(l.nprocs));
  MPI_Allgather(&l.subjob, 1, MPI_INT, subjob_of.data(), 1, MPI_INT, MPI_COMM_WORLD);
  auto members = [&](int s) {
    std::vector<int> m;
    for (int q = 0; q < l.nprocs; ++q)
      if (subjob_of[static_cast<std::size_t>(q)] == s) m.push_back(q);
    return m;
  };
  const std::vector<int> mine = members(l.subjob);
  const auto index = static_cast<std::size_t>(
      std::find(mine.begin(), mine.end(), l.pid) - mine.begin());
  l.next_in_site = mine[(index + 1) % mine.size()];
  const std::vector<int> next = members((l.subjob + 1) % l.nsubjobs);
  l.partner = next[index % next.size()];
  MPI_Comm_split(MPI_COMM_WORLD, l.subjob, l.pid, &l.site);
  return l;
}

class Table {
 public:
  explicit Table(const std::string& csv_path) {
    if (bsp_pid() != 0) return;
    if (!csv_path.empty()) {
      std::string why;  // never through a link, nor into another user's file
      csv_ = bspg::safe_paths::create_stream(csv_path, "w", why, 0644, false);
      if (!csv_)
        bsp_abort("%s: cannot write %s: %s\n", kProgram, csv_path.c_str(), why.c_str());
      std::fprintf(csv_, "case,bspg_median_ms,mpi_median_ms,ratio,target,result\n");
    }
    std::printf("%-7s %-44s %11s %11s %8s %8s  %s\n", "case", "what", "bspg (ms)", "MPI (ms)",
                "ratio", "target", "result");
  }
  ~Table() {
    if (csv_) std::fclose(csv_);
  }
  void add(const char* name, const char* what, const bench::Alternation& t, double target) {
    if (bsp_pid() != 0) return;
    const bool pass = t.ratio() <= target;
    ++targets_;
    met_ += pass ? 1 : 0;
    char target_text[32];
    std::snprintf(target_text, sizeof target_text, "<= %gx", target);
    std::printf("%-7s %-44s %11.3f %11.3f %7.2fx %8s  %s\n", name, what, t.bspg_us / 1000,
                t.raw_us / 1000, t.ratio(), target_text, pass ? "PASS" : "FAIL");
    std::fflush(stdout);
    if (csv_)
      std::fprintf(csv_, "%s,%.4f,%.4f,%.4f,%g,%s\n", name, t.bspg_us / 1000, t.raw_us / 1000,
                   t.ratio(), target, pass ? "PASS" : "FAIL");
  }
  void finish() const {
    if (bsp_pid() == 0) std::printf("\n%d of %d targets met\n", met_, targets_);
  }

 private:
  FILE* csv_ = nullptr;
  int targets_ = 0, met_ = 0;
};

// The value word i of process src carries in repetition rep (exact in a double).
double value(int rep, int src, long i) {
  return static_cast<double>(rep % 1024) * 1e9 + static_cast<double>(src) * 1e6 +
         static_cast<double>(i);
}

void check(bool ok, const char* variant, int rep, const char* what, long i) {
  if (!ok)
    bsp_abort("%s: %s, repetition %d: wrong data on process %d at word %ld (%s)\n", kProgram,
              variant, rep, bsp_pid(), i, what);
}

// A step's time: the mean of kBackToBack steps in a row after a barrier. Processes leave a barrier
// up to half a round trip apart; a single step would count that skew, steps in a row spread it.
constexpr int kBackToBack = 4;
template <typename Step>
double timed(Step step) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = bench::seconds_now();
  for (int i = 0; i < kBackToBack; ++i) step();
  return (bench::seconds_now() - start) / kBackToBack;
}

// The exchange an MPI program writes for one superstep's irregular traffic: counts by
// MPI_Alltoall, then (index, value) pairs by MPI_Alltoallv; returns the pairs received.
struct Pair {
  double index, value;
};
std::vector<Pair> mpi_exchange(const std::vector<int>& dest, const std::vector<Pair>& pairs) {
  const int p = bsp_nprocs();
  std::vector<int> send_counts(static_cast<std::size_t>(p)), recv_counts(static_cast<std::size_t>(p));
  for (int d : dest) ++send_counts[static_cast<std::size_t>(d)];
  std::vector<int> send_offsets(static_cast<std::size_t>(p)), recv_offsets(static_cast<std::size_t>(p));
  for (int q = 1; q < p; ++q)
    send_offsets[static_cast<std::size_t>(q)] =
        send_offsets[static_cast<std::size_t>(q) - 1] + send_counts[static_cast<std::size_t>(q) - 1];
  std::vector<Pair> packed(pairs.size());
  std::vector<int> fill = send_offsets;
  for (std::size_t i = 0; i < pairs.size(); ++i) packed[static_cast<std::size_t>(fill[static_cast<std::size_t>(dest[i])]++)] = pairs[i];
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int q = 0; q < p; ++q) {
    recv_offsets[static_cast<std::size_t>(q)] = total;
    total += recv_counts[static_cast<std::size_t>(q)];
  }
  std::vector<Pair> received(static_cast<std::size_t>(total));
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
  MPI_Type_commit(&pair);
  MPI_Alltoallv(packed.data(), send_counts.data(), send_offsets.data(), pair, received.data(),
                recv_counts.data(), recv_offsets.data(), pair, MPI_COMM_WORLD);
  MPI_Type_free(&pair);
  return received;
}

void run_sync(const Options& opt, Table& table) {
  table.add("sync", "empty bsp_sync vs MPI_Allreduce of an int",
            bench::time_alternating(
                opt.reps, kWarmupRepetitions, [](int) { return timed([] { bsp_sync(); }); },
                [](int) {
                  return timed([] {
                    int one = 1, sum = 0;
                    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
                  });
                }),
            1.25);
}

// The processes whose partner this one is (several, or none, where subjobs differ in size).
std::vector<int> senders_to(const Layout& l) {
  std::vector<int> partner_of(static_cast<std::size_t>(l.nprocs));
  MPI_Allgather(&l.partner, 1, MPI_INT, partner_of.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> senders;
  for (int q = 0; q < l.nprocs; ++q)
    if (partner_of[static_cast<std::size_t>(q)] == l.pid) senders.push_back(q);
  return senders;
}

// Words of process q land at [q * n, (q + 1) * n) of the receiver's area; the rest stays -1.
void check_area(const std::vector<double>& area, long n, const std::vector<int>& senders, int rep,
                const char* variant) {
  std::vector<bool> sent(area.size() / static_cast<std::size_t>(n), false);
  for (int q : senders) sent[static_cast<std::size_t>(q)] = true;
  for (std::size_t i = 0; i < area.size(); ++i) {
    const auto q = static_cast<int>(i / static_cast<std::size_t>(n));
    const double want = sent[static_cast<std::size_t>(q)]
                            ? value(rep, q, static_cast<long>(i % static_cast<std::size_t>(n)))
                            : -1.0;
    check(area[i] == want, variant, rep, "area", static_cast<long>(i));
  }
}

void run_words(const Options& opt, const Layout& l, Table& table) {
  const long h = opt.words;
  std::vector<double> mine(static_cast<std::size_t>(h)),
      area(static_cast<std::size_t>(h) * static_cast<std::size_t>(l.nprocs)),
      got(static_cast<std::size_t>(h));
  bsp_push_reg(area.data(), static_cast<int>(area.size() * sizeof(double)));
  bsp_push_reg(mine.data(), static_cast<int>(h * sizeof(double)));
  bsp_sync();
  const std::vector<int> senders = senders_to(l);
  auto prepare = [&](int rep) {
    for (long i = 0; i < h; ++i) mine[static_cast<std::size_t>(i)] = value(rep, l.pid, i);
    std::fill(area.begin(), area.end(), -1.0);
    std::fill(got.begin(), got.end(), -1.0);
    bsp_sync();  // everybody's area is ready before anybody puts
  };
  std::vector<int> dest(static_cast<std::size_t>(h), l.partner);
  auto mpi_once = [&](int rep) {
    prepare(rep);
    std::vector<Pair> pairs(static_cast<std::size_t>(h));
    for (long i = 0; i < h; ++i)
      pairs[static_cast<std::size_t>(i)] = {static_cast<double>(l.pid * h + i),
                                            mine[static_cast<std::size_t>(i)]};
    std::vector<Pair> received;
    const double t = timed([&] { received = mpi_exchange(dest, pairs); });
    for (const Pair& r : received) area[static_cast<std::size_t>(r.index)] = r.value;
    check_area(area, h, senders, rep, "MPI exchange");
    return t;
  };
  if (opt.runs("put"))
    table.add("put", "h single-word bsp_puts to the partner",
              bench::time_alternating(
                  opt.reps, kWarmupRepetitions,
                  [&](int rep) {
                    prepare(rep);
                    const double t = timed([&] {
                      for (long i = 0; i < h; ++i)
                        bsp_put(l.partner, &mine[static_cast<std::size_t>(i)], area.data(),
                                static_cast<int>((l.pid * h + i) * sizeof(double)), sizeof(double));
                      bsp_sync();
                    });
                    check_area(area, h, senders, rep, "bsp_put");
                    return t;
                  },
                  mpi_once),
              1.25);
  if (opt.runs("get"))
    table.add("get", "h single-word bsp_gets from the partner",
              bench::time_alternating(
                  opt.reps, kWarmupRepetitions,
                  [&](int rep) {
                    prepare(rep);
                    const double t = timed([&] {
                      for (long i = 0; i < h; ++i)
                        bsp_get(l.partner, mine.data(), static_cast<int>(i * sizeof(double)),
                                &got[static_cast<std::size_t>(i)], sizeof(double));
                      bsp_sync();
                    });
                    for (long i = 0; i < h; ++i)
                      check(got[static_cast<std::size_t>(i)] == value(rep, l.partner, i), "bsp_get",
                            rep, "get", i);
                    return t;
                  },
                  mpi_once),
              1.5);
  bsp_pop_reg(mine.data());
  bsp_pop_reg(area.data());
  bsp_sync();
}

// One bsp_get of `bytes` from the partner's registered area, against the exchange an MPI program
// writes when each process owes data to those that ask for it: the counts by MPI_Alltoall, the
// bytes by MPI_Alltoallv, from the process that has them to the one that asked.
void run_large_get(const Options& opt, const Layout& l, Table& table, const char* name,
                   long bytes) {
  const long n = bytes / static_cast<long>(sizeof(double));
  std::vector<double> mine(static_cast<std::size_t>(n)), got(static_cast<std::size_t>(n));
  bsp_push_reg(mine.data(), static_cast<int>(bytes));
  bsp_sync();
  const std::vector<int> askers = senders_to(l);  // whose partner this process is
  const int p = l.nprocs;
  const auto up = static_cast<std::size_t>(p);
  auto prepare = [&](int rep) {
    for (long i = 0; i < n; ++i) mine[static_cast<std::size_t>(i)] = value(rep, l.pid, i);
    std::fill(got.begin(), got.end(), -1.0);
    bsp_sync();  // everybody's area is ready before anybody reads it
  };
  auto verify = [&](int rep, const char* variant) {
    for (long i = 0; i < n; ++i)
      check(got[static_cast<std::size_t>(i)] == value(rep, l.partner, i), variant, rep, "get", i);
  };
  std::vector<int> send_counts(up), recv_counts(up), send_offsets(up), recv_offsets(up);
  std::vector<double> outgoing(askers.size() * static_cast<std::size_t>(n));
  char what[64];
  std::snprintf(what, sizeof what, "one bsp_get of %ld KiB from the partner", bytes / 1024);
  table.add(name, what,
            bench::time_alternating(
                opt.reps, kWarmupRepetitions,
                [&](int rep) {
                  prepare(rep);
                  const double t = timed([&] {
                    bsp_get(l.partner, mine.data(), 0, got.data(), static_cast<int>(bytes));
                    bsp_sync();
                  });
                  verify(rep, "bsp_get");
                  return t;
                },
                [&](int rep) {
                  prepare(rep);
                  const double t = timed([&] {
                    // The owner packs what each asker wants (its own words, here) and says how
                    // much; the askers learn it, then the words move.
                    std::fill(send_counts.begin(), send_counts.end(), 0);
                    int at = 0;
                    for (std::size_t k = 0; k < askers.size(); ++k) {
                      const auto q = static_cast<std::size_t>(askers[k]);
                      send_counts[q] = static_cast<int>(n);
                      std::copy(mine.begin(), mine.end(),
                                outgoing.begin() + static_cast<long>(k) * n);
                    }
                    for (std::size_t q = 0; q < up; ++q) {
                      send_offsets[q] = at;
                      at += send_counts[q];
                    }
                    MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT,
                                 MPI_COMM_WORLD);
                    at = 0;
                    for (std::size_t q = 0; q < up; ++q) {
                      recv_offsets[q] = at;
                      at += recv_counts[q];
                    }
                    MPI_Alltoallv(outgoing.data(), send_counts.data(), send_offsets.data(),
                                  MPI_DOUBLE, got.data(), recv_counts.data(), recv_offsets.data(),
                                  MPI_DOUBLE, MPI_COMM_WORLD);
                  });
                  verify(rep, "MPI exchange");
                  return t;
                }),
            1.5);
  bsp_pop_reg(mine.data());
  bsp_sync();
}

void run_bulk(const Options& opt, const Layout& l, Table& table) {
  constexpr long kWords = (1 << 20) / sizeof(double);
  const std::vector<int> senders = senders_to(l);
  std::vector<double> mine(kWords),
      area(static_cast<std::size_t>(kWords) * static_cast<std::size_t>(l.nprocs));
  bsp_push_reg(area.data(), static_cast<int>(area.size() * sizeof(double)));
  bsp_sync();
  auto prepare = [&](int rep) {
    for (long i = 0; i < kWords; ++i) mine[static_cast<std::size_t>(i)] = value(rep, l.pid, i);
    std::fill(area.begin(), area.end(), -1.0);
    bsp_sync();
  };
  std::vector<MPI_Request> requests(senders.size() + 1);
  table.add("bulk", "one bsp_put of 1 MiB vs MPI send + receive + Barrier",
            bench::time_alternating(
                opt.reps, kWarmupRepetitions,
                [&](int rep) {
                  prepare(rep);
                  const double t = timed([&] {
                    bsp_put(l.partner, mine.data(), area.data(),
                            static_cast<int>(l.pid * kWords * sizeof(double)),
                            static_cast<int>(kWords * sizeof(double)));
                    bsp_sync();
                  });
                  check_area(area, kWords, senders, rep, "bsp_put of 1 MiB");
                  return t;
                },
                [&](int rep) {
                  prepare(rep);
                  // MPI_Sendrecv where every process has one sender; in general a receive per
                  // sender, the send, and a barrier.
                  const double t = timed([&] {
                    for (std::size_t k = 0; k < senders.size(); ++k)
                      MPI_Irecv(&area[static_cast<std::size_t>(senders[k]) * kWords],
                                static_cast<int>(kWords), MPI_DOUBLE, senders[k], 7, MPI_COMM_WORLD,
                                &requests[k]);
                    MPI_Isend(mine.data(), static_cast<int>(kWords), MPI_DOUBLE, l.partner, 7,
                              MPI_COMM_WORLD, &requests[senders.size()]);
                    MPI_Waitall(static_cast<int>(requests.size()), requests.data(),
                                MPI_STATUSES_IGNORE);
                    MPI_Barrier(MPI_COMM_WORLD);
                  });
                  check_area(area, kWords, senders, rep, "MPI send of 1 MiB");
                  return t;
                }),
            1.25);
  bsp_pop_reg(area.data());
  bsp_sync();
}

void run_group(const Options& opt, const Layout& l, Table& table) {
  double word = 0, slot = -1;
  bsp_push_reg(&slot, sizeof slot);
  bsp_sync();
  const int group = bspg_subjob_group();
  int site_rank = 0, site_size = 1;
  MPI_Comm_rank(l.site, &site_rank);
  MPI_Comm_size(l.site, &site_size);
  const int next = (site_rank + 1) % site_size, previous = (site_rank + site_size - 1) % site_size;
  table.add("group", "bsp_put + bspg_group_sync of the subjob",
            bench::time_alternating(
                opt.reps, kWarmupRepetitions,
                [&](int rep) {
                  word = rep;
                  return timed([&] {
                    bsp_put(l.next_in_site, &word, &slot, 0, sizeof word);
                    bspg_group_sync(group);
                  });
                },
                [&](int rep) {
                  word = rep;
                  double in = -1;
                  return timed([&] {
                    MPI_Sendrecv(&word, 1, MPI_DOUBLE, next, 8, &in, 1, MPI_DOUBLE, previous, 8,
                                 l.site, MPI_STATUS_IGNORE);
                    MPI_Barrier(l.site);
                  });
                }),
            2.0);
  bsp_pop_reg(&slot);
  bsp_sync();
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (const auto status = parse_options(argc, argv, opt)) return *status;
  bsp_begin(bsp_nprocs());
  bench::require_mpi_world(kProgram);
  Layout layout = find_layout();
  if (bsp_pid() == 0)
    std::printf(
        "bspwan: bspg against plain MPI in the same run, p = %d in %d subjob(s), %ld "
        "repetitions per row, h = %ld words\n  (medians of the slowest process's time; "
        "partner: the same rank in the next subjob)\n\n",
        bsp_nprocs(), bspg_nsubjobs(), opt.reps, opt.words);
  {
    Table table(opt.csv);
    if (opt.runs("sync")) run_sync(opt, table);
    if (opt.runs("put") || opt.runs("get")) run_words(opt, layout, table);
    if (opt.runs("get8k")) run_large_get(opt, layout, table, "get8k", 8 * 1024);
    if (opt.runs("get64k")) run_large_get(opt, layout, table, "get64k", 64 * 1024);
    if (opt.runs("get1m")) run_large_get(opt, layout, table, "get1m", 1024 * 1024);
    if (opt.runs("bulk")) run_bulk(opt, layout, table);
    if (opt.runs("group")) run_group(opt, layout, table);
    table.finish();
  }
  MPI_Comm_free(&layout.site);
  bsp_end();
  return 0;
}
