// summary.cpp - the figures of the summary, and the summary itself (one screen).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "outputs.h"

namespace bspg::profile {

namespace {

constexpr std::size_t kCostlyShown = 5;
constexpr std::size_t kImbalancedShown = 3;
constexpr std::size_t kMismatchesKept = 5;  // the plot labels them; the summary names 3
constexpr std::size_t kLastCallersShown = 3;
constexpr std::size_t kProblemFilesShown = 2;
constexpr std::size_t kRestartsShown = 2;

// Keeps the `limit` items of largest key(item), largest first.
template <typename T, typename Key>
void keep_largest(std::vector<T>& list, const T& item, std::size_t limit, Key key) {
  if (list.size() == limit && !(key(item) > key(list.back()))) return;
  const auto at = std::find_if(list.begin(), list.end(),
                               [&](const T& other) { return key(item) > key(other); });
  list.insert(at, item);
  if (list.size() > limit) list.pop_back();
}

std::string percent(double part, double whole) {
  char text[32];
  std::snprintf(text, sizeof text, "%5.1f%%", whole > 0 ? 100 * part / whole : 0.0);
  return text;
}

std::string share(std::uint64_t part, std::uint64_t whole) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%",
                100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return text;
}

std::string names_of(const std::vector<std::string>& names, std::size_t shown) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < shown; ++i)
    text += (i > 0 ? ", " : "") + names[i];
  if (names.size() > shown) text += " and " + std::to_string(names.size() - shown) + " more";
  return text;
}

}  // namespace

StepRef step_ref(const Step& step) {
  StepRef ref;
  ref.index = step.index;
  ref.attempt = step.attempt;
  ref.section = step.section;
  ref.superstep = step.superstep;
  ref.group = step.group;
  ref.group_first = step.group_first;
  ref.group_step = step.group_step;
  ref.kind = step.rows.empty() ? 0 : step.rows.front().kind;
  return ref;
}

std::string step_label(const StepRef& ref, bool with_attempt) {
  std::string text;
  if (with_attempt) text += "attempt " + std::to_string(ref.attempt) + " ";
  if (ref.section > 0) text += "section " + std::to_string(ref.section) + " ";
  text += "superstep " + std::to_string(ref.superstep);
  if (ref.group >= 0)
    text += " group " + std::to_string(ref.group) + " (lowest pid " +
            std::to_string(ref.group_first) + ") step " + std::to_string(ref.group_step);
  return text + " (" + kind_name(ref.kind) + ")";
}

SummaryStats::SummaryStats(const BspParameters& params, const ProfileScan& scan)
    : params_(params), scan_(scan), last_return_s_(scan.origin_s) {}

void SummaryStats::add(const Step& step) {
  ++steps_;
  const StepRef ref = step_ref(step);
  ++steps_of_kind_[ref.kind < steps_of_kind_.size() ? ref.kind : 0];
  double compute_sum = 0;
  for (const Row& row : step.rows) {
    compute_s_ += row.compute_s;
    wait_s_ += row.wait_s;
    comm_s_ += row.comm_s;
    compute_sum += row.compute_s;
    last_return_s_ = std::max(last_return_s_, row.return_s);
  }

  const Row& slowest = step.slowest();
  const double time_s = slowest.compute_s + slowest.sync_s;
  keep_largest(costly_, Costly{ref, time_s, step.h_bytes, slowest.pid, slowest.compute_s},
               kCostlyShown, [](const Costly& c) { return c.time_s; });
  if (params_.found) {
    const Mismatch miss{
        ref, time_s,
        predicted_seconds(params_, step.max_compute_s(), static_cast<double>(step.h_bytes))};
    keep_largest(mismatches_, miss, kMismatchesKept,
                 [](const Mismatch& m) { return std::fabs(m.measured_s - m.predicted_s); });
  }

  if (step.rows.size() < 2) return;
  ++shared_steps_;
  const Row* last = &step.rows.front();
  const Row* busiest = &step.rows.front();
  for (const Row& row : step.rows) {
    if (row.call_s > last->call_s) last = &row;
    if (row.compute_s > busiest->compute_s) busiest = &row;
  }
  if (last_to_call_.size() <= static_cast<std::size_t>(last->pid))
    last_to_call_.resize(static_cast<std::size_t>(last->pid) + 1, 0);
  ++last_to_call_[static_cast<std::size_t>(last->pid)];

  const double mean_s = compute_sum / static_cast<double>(step.rows.size());
  if (busiest->compute_s > mean_s)
    keep_largest(
        imbalanced_,
        Imbalanced{ref, busiest->compute_s - mean_s, busiest->compute_s, mean_s, busiest->pid},
        kImbalancedShown, [](const Imbalanced& i) { return i.lost_s; });
}

void SummaryStats::restart(int attempt, double begin_s, std::uint64_t next_step) {
  restarts_.push_back({attempt, begin_s, next_step});
}

void SummaryStats::print(std::ostream& out, const std::string& dir,
                         const std::vector<std::string>& files,
                         const std::vector<std::string>& notes) const {
  const bool attempts = several_attempts();
  int min_p = std::numeric_limits<int>::max(), max_p = 0;
  for (const SectionFiles& section : scan_.sections) {
    min_p = std::min(min_p, section.nprocs);
    max_p = std::max(max_p, section.nprocs);
  }
  out << "bspprof: " << dir << ": p = " << min_p;
  if (max_p != min_p) out << " to " << max_p;
  out << ", " << steps_ << (steps_ == 1 ? " step" : " steps");
  std::string kinds;
  for (std::uint32_t kind = 1; kind < steps_of_kind_.size(); ++kind)
    if (steps_of_kind_[kind] > 0)
      kinds += (kinds.empty() ? "" : ", ") + std::to_string(steps_of_kind_[kind]) + " " +
               kind_name(kind);
  if (!kinds.empty()) out << " (" << kinds << ")";
  out << ", " << scan_.attempts.size() << (attempts ? " attempts" : " attempt");
  if (scan_.sections.size() > scan_.attempts.size())
    out << ", " << scan_.sections.size() << " SPMD sections in all";
  out << "\n";
  if (steps_ == 0) out << "no syncs were recorded\n";

  const double total_s = compute_s_ + wait_s_ + comm_s_;
  out << "time: " << human_seconds(last_return_s_ - scan_.origin_s)
      << " from the first bsp_begin to the last sync's return\n";
  out << "time of the processes, summed over them (" << human_seconds(total_s) << "):\n";
  out << "  compute        " << percent(compute_s_, total_s) << "  " << human_seconds(compute_s_)
      << "\n";
  out << "  communication  " << percent(comm_s_, total_s) << "  " << human_seconds(comm_s_) << "\n";
  out << "  waiting        " << percent(wait_s_, total_s) << "  " << human_seconds(wait_s_)
      << "  (for the last process to call the sync)\n";

  if (!costly_.empty())
    out << "costliest steps (compute + sync of the critical process, the last to call the sync):\n";
  for (const Costly& c : costly_)
    out << "  " << step_label(c.step, attempts) << ": " << human_seconds(c.time_s)
        << ", h = " << human_bytes(c.h_bytes) << ", critical p" << c.slowest_pid << " (compute "
        << human_seconds(c.slowest_compute_s) << ")\n";

  if (!imbalanced_.empty())
    out << "most imbalanced steps (max / mean compute, by the time the imbalance cost):\n";
  for (const Imbalanced& i : imbalanced_) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2fx", i.mean_s > 0 ? i.max_s / i.mean_s : 0.0);
    out << "  " << step_label(i.step, attempts) << ": " << (i.mean_s > 0 ? ratio : "-") << " (p"
        << i.max_pid << " " << human_seconds(i.max_s) << ", mean " << human_seconds(i.mean_s)
        << ")\n";
  }

  if (shared_steps_ > 0) {
    std::vector<std::pair<std::uint64_t, int>> callers;
    for (std::size_t pid = 0; pid < last_to_call_.size(); ++pid)
      if (last_to_call_[pid] > 0) callers.emplace_back(last_to_call_[pid], static_cast<int>(pid));
    std::stable_sort(callers.begin(), callers.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    out << "last to call the sync (of " << shared_steps_ << " steps of 2+ processes):";
    for (std::size_t i = 0; i < callers.size() && i < kLastCallersShown; ++i)
      out << (i > 0 ? "," : "") << " p" << callers[i].second << " "
          << share(callers[i].first, shared_steps_) << " (" << callers[i].first << ")";
    out << "\n";
  }

  if (restarts_.empty()) {
    out << "restarts: none\n";
  } else {
    out << "restarts: " << restarts_.size() << ":";
    for (std::size_t i = 0; i < restarts_.size() && i < kRestartsShown; ++i)
      out << (i > 0 ? "," : "") << " attempt " << restarts_[i].attempt << " began at "
          << human_seconds(restarts_[i].begin_s - scan_.origin_s) << " (step "
          << restarts_[i].next_step << ")";
    if (restarts_.size() > kRestartsShown) out << " ...";
    out << "\n";
  }

  if (params_.found) {
    char g_l[160];
    std::snprintf(g_l, sizeof g_l, "g = %.4g us/word, l = %.4g us", params_.g_s * 1e6,
                  params_.l_s * 1e6);
    out << "BSP model w + g*h + l: " << g_l << " from " << params_.file;
    if (params_.measured_p > 0) {
      out << " (measured at p = " << params_.measured_p;
      if (params_.measured_p != max_p) out << "; this job ran at p = " << max_p;
      out << ")";
    }
    out << "\n";
    if (!mismatches_.empty()) {
      out << "  measured - predicted, largest:";
      for (std::size_t i = 0; i < mismatches_.size() && i < 3; ++i) {
        const Mismatch& m = mismatches_[i];
        const double diff = m.measured_s - m.predicted_s;
        out << (i > 0 ? ";" : "") << (attempts ? " attempt " + std::to_string(m.step.attempt) : "")
            << " superstep " << m.step.superstep
            << (m.step.group >= 0 ? " group " + std::to_string(m.step.group) : "") << " "
            << (diff >= 0 ? "+" : "") << human_seconds(diff);
      }
      out << "\n";
    }
  } else {
    out << "BSP model: not drawn (" << params_.problem << ")\n"
        << "  measure g and l with `bsprun -p " << max_p << " bspbench` (it writes bspbench.dat),"
        << " then run `bspprof --params bspbench.dat " << dir << "`\n";
  }

  std::vector<std::string> problems;
  if (!scan_.cut_files.empty())
    problems.push_back(
        std::to_string(scan_.cut_files.size()) +
        (scan_.cut_files.size() == 1 ? " file ends" : " files end") +
        " in a cut record (a crash?): " + names_of(scan_.cut_files, kProblemFilesShown));
  if (scan_.files_left_out > 0)
    problems.push_back(std::to_string(scan_.files_left_out) +
                       (scan_.files_left_out == 1 ? " file" : " files") +
                       " left out (see the messages above)");
  if (scan_.files_with_bad_records > 0)
    problems.push_back(std::to_string(scan_.files_with_bad_records) +
                       (scan_.files_with_bad_records == 1 ? " file has" : " files have") +
                       " a damaged record: only the records before it are used");
  for (const std::string& missing : scan_.missing) problems.push_back(missing);
  for (std::size_t i = 0; i < problems.size() && i < 4; ++i)
    out << (i == 0 ? "problems: " : "          ") << problems[i] << "\n";
  if (problems.size() > 4) out << "          and " << problems.size() - 4 << " more\n";

  for (const std::string& note : notes) out << note << "\n";
  out << "written: " << names_of(files, files.size()) << "\n";
}

}  // namespace bspg::profile
