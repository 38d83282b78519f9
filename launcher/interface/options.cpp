// options.cpp - hand-written parser: options stop at the program name, so the
// program's own options are never touched.
#include "options.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "help.h"
#include "untrusted.h"

namespace bspg::launcher {
namespace {

// The whole number that all of `text` spells, if it is within [lowest, highest].
std::optional<long> whole_number(const std::string& text, long lowest, long highest) {
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < lowest || value > highest)
    return std::nullopt;
  return value;
}

// The finite number above 0 that all of `text` spells, if it does.
std::optional<double> positive_number(const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(value) || value <= 0)
    return std::nullopt;
  return value;
}

int parse_positive_int(const std::string& text, const std::string& option,
                       const char* what = "processes") {
  const auto value = whole_number(text, 1, 1000000);
  if (!value)
    throw UsageError(option + " needs a positive whole number of " + what + ", not '" + text + "'");
  return static_cast<int>(*value);
}

int parse_count(const std::string& text, const std::string& option, int most) {
  const auto value = whole_number(text, 0, most);
  if (!value)
    throw UsageError(option + " needs a whole number from 0 to " + std::to_string(most) +
                     ", not '" + text + "'");
  return static_cast<int>(*value);
}

double parse_seconds(const std::string& text, const std::string& option, double most) {
  const auto value = positive_number(text);
  if (!value) throw UsageError(option + " needs a positive number of seconds, not '" + text + "'");
  if (*value > most) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", most);
    throw UsageError(option + " is at most " + buf + " seconds, not '" + text + "'");
  }
  return *value;
}

// Edits (insertions, deletions, replacements) that turn a into b.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "unknown option 'X'", with the option meant where one is close: a typo (a third of the
// letters at most) or the start of exactly one option's name.
std::string unknown_option(const std::string& arg, const std::string& name,
                           const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(1, name.size() / 3) + 1;
  std::vector<std::string> starting;
  for (const std::string& option : known) {
    if (option.size() > 2 && name.size() > 3 && option.rfind(name, 0) == 0)
      starting.push_back(option);
    const std::size_t distance = edit_distance(name, option);
    if (distance < best_distance) {
      best_distance = distance;
      best = option;
    }
  }
  if (best.empty() && starting.size() == 1) best = starting.front();
  std::string text = "unknown option '" + arg + "'";
  if (!best.empty()) text += "; did you mean " + best + "?";
  return text;
}

// --mpirun-arg ARG (after `before`, the ones given so far): refused where the starter would take
// from bsprun what it sets itself. Open MPI's and MPICH's spellings alike: bsprun's own MPI may
// be either, and a refusal should not depend on which.
void check_starter_arg(const std::vector<std::string>& before, const std::string& arg) {
  const auto is_one_of = [](const std::string& word, std::initializer_list<const char*> words) {
    return std::any_of(words.begin(), words.end(), [&](const char* w) { return word == w; });
  };
  const std::string word = arg.substr(0, arg.find('='));
  const char* const kReach =
      "bsprun chooses how the starter reaches the hosts (its own ssh configuration)";
  std::string why;
  if (is_one_of(word, {"-np", "--np", "-n", "--n", "-c", "-N", "--npernode", "-npernode", "-ppn",
                       "--ppn", "-npes"}))
    why = "the process count is bsprun's (-p N, or --max-procs N in master mode)";
  else if (is_one_of(word, {"-H", "-host", "--host", "-hosts", "--hosts", "-hostfile", "--hostfile",
                            "-machinefile", "--machinefile", "-machine", "-f", "--default-hostfile",
                            "-rf", "--rankfile", "-configfile", "--app"}))
    why = "the hosts are bsprun's (--hostfile FILE, --rsl FILE, or the Slurm allocation)";
  else if (is_one_of(word, {"--launch-agent", "-launcher", "--launcher", "-launcher-exec",
                            "--launcher-exec", "-bootstrap", "-bootstrap-exec", "-rsh"}))
    why = kReach;
  else if (arg == ":")
    why = "':' would start another program (an MPMD start) after bsprun's";
  else if (!before.empty() && is_one_of(before.back(), {"--mca", "-mca", "--gmca", "-gmca",
                                                        "--omca", "--prtemca", "--pmixmca"})) {
    if (arg == "osc")
      why = "bsprun chooses the one-sided components (its own --mca osc VALUE wins)";
    else if (arg.find("rsh_agent") != std::string::npos ||
             arg.find("ssh_agent") != std::string::npos)
      why = kReach;
  }
  if (!why.empty()) throw UsageError("--mpirun-arg '" + arg + "' is refused: " + why);
}

// What --restarts, --resume, --migrate-load and --host-timeout need (after the other checks).
void check_checkpoint_options(const Options& opt) {
  const char* restarting = opt.resume             ? "--resume"
                           : opt.restarts > 0     ? "--restarts"
                           : opt.migrate_load > 0 ? "--migrate-load"
                                                  : nullptr;
  if (restarting && !opt.rsl_in.empty())
    throw UsageError(std::string(restarting) +
                     " cannot be combined with --rsl: a restarted job is placed anew on the " +
                     "candidates of a host file (--hostfile and -p)");
  if (restarting && opt.nprocs == 0)
    throw UsageError(std::string(restarting) +
                     " needs -p N: a restarted job starts all its processes at once " +
                     "(master mode spawns them from the master)");
  if (opt.resume && opt.checkpoint_dir.empty() && opt.job_id.empty())
    throw UsageError(
        "--resume needs the job's --job-id ID or --checkpoint-dir DIR (bsprun printed them when "
        "the job started)");
  if (opt.spares > 0 && opt.nprocs == 0)
    throw UsageError(
        "--spares needs -p N: spares start with the job, and master mode starts its processes "
        "later, from the master");
  if (opt.spares > 0 && !opt.rsl_in.empty())
    throw UsageError("--spares cannot be combined with --rsl: bsprun places the spares itself, on "
                     "the candidates of a host file (--hostfile and -p)");
  if (opt.recovery == Options::Recovery::InPlace && opt.spares == 0)
    throw UsageError(
        "--recovery in-place needs --spares K (K >= 1): a spare takes the lost process's place");
  if (opt.copies_given && opt.nprocs > 0 && opt.copies >= opt.nprocs)
    throw UsageError("--copies " + std::to_string(opt.copies) + " needs more than " +
                     std::to_string(opt.copies) +
                     " processes (-p): each copy is kept by another process of the job");
  if (opt.copies_given && opt.nprocs == 0)
    throw UsageError(
        "--copies needs -p N: the copies are kept by the job's processes, which "
        "master mode starts later, from the master");
  if (opt.migrate_load > 0 && opt.hostfile.empty())
    throw UsageError(
        "--migrate-load needs a host file (--hostfile or BSPG_HOSTFILE): it moves the job between "
        "hosts");
}

}  // namespace

bool uses_checkpoints(const Options& opt) {
  return opt.restarts > 0 || opt.resume || !opt.checkpoint_dir.empty() || opt.job_id_given ||
         opt.migrate_load > 0 || opt.copies_given || opt.spares > 0;
}

// Hand-written, not getopt_long: -np/-npes need getopt_long_only, which then also takes -hostfile,
// -dry-run and every other single-dash spelling and abbreviation (-pr as --procs); --mca takes
// two values and --help an optional separate TOPIC, neither of which getopt can read.
Options parse_options(int argc, char** argv) {
  Options opt;
  using Setter = std::function<void(const std::string& name, const std::string& value)>;
  // Options that take one value.
  const Setter procs = [&](auto& n, auto& v) { opt.nprocs = parse_positive_int(v, n); };
  const std::map<std::string, Setter> with_value = {
      {"-p", procs},
      {"--procs", procs},
      // The spellings of other BSPlibs' bsprun (BSPonMPI, Oxford BSPlib) and of mpirun.
      {"-n", procs},
      {"-np", procs},
      {"-npes", procs},
      {"--max-procs", [&](auto& n, auto& v) { opt.max_procs = parse_positive_int(v, n); }},
      {"--hostfile", [&](auto&, auto& v) { opt.hostfile = v; }},
      {"--rsl", [&](auto&, auto& v) { opt.rsl_in = v; }},
      {"--rsl-out", [&](auto&, auto& v) { opt.rsl_out = v; }},
      {"--probe-timeout",
       [&](auto& n, auto& v) { opt.probe_timeout_s = parse_seconds(v, n, 600); }},
      {"--fanout", [&](auto& n, auto& v) { opt.fanout = parse_positive_int(v, n, "hosts"); }},
      {"--time-limit", [&](auto& n, auto& v) { opt.time_limit_s = parse_seconds(v, n, 1e8); }},
      {"-x",
       [&](auto& n, auto& v) {
         const std::string name = v.substr(0, v.find('='));
         if (!untrusted::is_environment_name(name))
           throw UsageError(n + " needs NAME or NAME=VALUE with a valid variable name, not '" + v +
                            "'");
         if (name == "BSPG_RUN" || name == "BSPG_JOB_ID" || name == "BSPG_PROGRAM_ID")
           throw UsageError("bsprun sets " + name +
                            " for every process itself (it names the run "
                            "whose checkpoints the process writes); it cannot be given with -x");
         if (name == "BSPG_CHECKPOINT_DIR" || name == "BSPG_RESUME" || name == "BSPG_COPIES")
           throw UsageError("bsprun sets " + name + " for every process itself: use " +
                            (name == "BSPG_RESUME"   ? "--resume"
                             : name == "BSPG_COPIES" ? "--copies K"
                                                     : "--checkpoint-dir DIR") +
                            " instead of -x");
         opt.exports.push_back(v);
       }},
      {"--mpirun-arg",
       [&](auto&, auto& v) {
         check_starter_arg(opt.starter_args, v);
         opt.starter_args.push_back(v);
       }},
      {"--restarts", [&](auto& n, auto& v) { opt.restarts = parse_count(v, n, 1000); }},
      {"--copies",
       [&](auto& n, auto& v) {
         const auto value = whole_number(v, 1, 1000);
         if (!value)
           throw UsageError(n + " needs a whole number of copies from 1 to 1000, not '" +
                            untrusted::printable(v) + "'");
         opt.copies = static_cast<int>(*value);
         opt.copies_given = true;
       }},
      {"--spares", [&](auto& n, auto& v) { opt.spares = parse_count(v, n, 1000); }},
      {"--recovery",
       [&](auto& n, auto& v) {
         if (v == "in-place")
           opt.recovery = Options::Recovery::InPlace;
         else if (v == "restart")
           opt.recovery = Options::Recovery::Restart;
         else
           throw UsageError(n + " takes in-place or restart, not '" + untrusted::printable(v) +
                            "'");
       }},
      {"--host-timeout",
       [&](auto& n, auto& v) { opt.host_timeout_s = parse_seconds(v, n, 86400); }},
      {"--checkpoint-dir",
       [&](auto& n, auto& v) {
         if (const std::string problem = untrusted::checkpoint_dir_problem(v); !problem.empty())
           throw UsageError(n + " '" + untrusted::printable(v) + "': " + problem);
         opt.checkpoint_dir = v;
       }},
      {"--profile",
       [&](auto& n, auto& v) {
         if (v.empty() || v.find('\0') != std::string::npos || v.find('\n') != std::string::npos ||
             v[0] == '-')
           throw UsageError(n + " needs a directory to write the profile into, not '" +
                            untrusted::printable(v) + "'");
         opt.profile_dir = v;
       }},
      {"--job-id",
       [&](auto& n, auto& v) {
         if (const std::string problem = untrusted::job_id_problem(v); !problem.empty())
           throw UsageError(n + " '" + untrusted::printable(v) + "': " + problem);
         opt.job_id = v;
         opt.job_id_given = true;
       }},
      {"--migrate-load",
       [&](auto& n, auto& v) {
         const auto load = positive_number(v);
         if (!load || *load > 1e6)
           throw UsageError(n + " needs a positive load average (e.g. 2.5), not '" + v + "'");
         opt.migrate_load = *load;
       }},
  };
  const std::map<std::string, bool*> flags = {
      {"--dry-run", &opt.dry_run},
      {"--show", &opt.show},
      {"--resume", &opt.resume},
      {"--allow-new-args", &opt.allow_new_args},
      {"--clean-up", &opt.clean_up},
      {"--stage", &opt.stage},
      {"--tag-output", &opt.tag_output},
      {"--accept-unknown-host-keys", &opt.accept_unknown_host_keys},
      {"-q", &opt.quiet},
      {"--quiet", &opt.quiet},
      {"-v", &opt.verbose},
      {"--verbose", &opt.verbose},
      {"-V", &opt.version},
      {"--version", &opt.version},
  };

  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;  // the program (or a lone "-")

    // --help TOPIC, --help=TOPIC: a part of the manual.
    if (arg == "-h" || arg == "--help" || arg.rfind("--help=", 0) == 0) {
      opt.help = true;
      if (arg.size() > 7)
        opt.help_topic = arg.substr(7);
      else if (i + 1 < argc && argv[i + 1][0] != '-')
        opt.help_topic = argv[++i];
      if (!opt.help_topic.empty() && !help_topic_text(opt.help_topic))
        throw UsageError("--help takes a topic: " + help_topics() + " or all; not '" +
                         opt.help_topic + "'");
      continue;
    }
    if (auto flag = flags.find(arg); flag != flags.end()) {
      *flag->second = true;
      continue;
    }

    if (arg == "--mca") {
      if (i + 2 >= argc) throw UsageError("--mca needs two values: KEY VALUE");
      opt.mca.emplace_back(argv[i + 1], argv[i + 2]);
      i += 2;
      continue;
    }

    // "--name=value", "--name value", "-p8", "-p 8"; single-dash long names ("-npes 4") whole.
    std::string name = arg, value;
    bool have_value = false;
    if (with_value.count(arg)) {
      // the whole argument names the option; its value follows
    } else if (arg.rfind("--", 0) == 0) {
      if (auto eq = arg.find('='); eq != std::string::npos) {
        name = arg.substr(0, eq);
        value = arg.substr(eq + 1);
        have_value = true;
      }
    } else if (arg.size() > 2) {
      name = arg.substr(0, 2);
      value = arg.substr(2);
      have_value = true;
    }
    auto setter = with_value.find(name);
    if (setter == with_value.end()) {
      if (flags.count(name)) throw UsageError("option " + name + " takes no value");
      std::vector<std::string> known = {"--mca", "--help"};
      for (const auto& [option, set] : flags) known.push_back(option);
      for (const auto& [option, set] : with_value) known.push_back(option);
      throw UsageError(unknown_option(arg, name, known));
    }
    if (!have_value) {
      if (i + 1 >= argc) throw UsageError("option " + name + " needs a value");
      value = argv[++i];
    }
    setter->second(name, value);
    opt.host_timeout_given = opt.host_timeout_given || name == "--host-timeout";
  }

  opt.given.assign(argv + 1, argv + i);
  if (opt.help || opt.version) return opt;
  if (i < argc) {
    opt.program = argv[i++];
    opt.program_args.assign(argv + i, argv + argc);
  }
  for (const auto& a : opt.program_args)
    if (a == ":")
      throw UsageError(
          "the program argument ':' cannot be passed on (mpirun reads it as a separator)");
  if (opt.hostfile.empty()) {
    if (const char* env = std::getenv("BSPG_HOSTFILE"); env && *env) opt.hostfile = env;
  }
  if (opt.nprocs != 0 && opt.max_procs != 0)
    throw UsageError(
        "--max-procs is for master mode (no -p): with -p N, N processes start at once");
  if (opt.clean_up) {
    if (!opt.job_id_given)
      throw UsageError(
          "--clean-up needs the job's --job-id ID (bsprun printed it when the job started)");
    if (!opt.program.empty())
      throw UsageError("--clean-up takes no program: it ends what job " + opt.job_id +
                       " left behind; '" + opt.program + "' is not expected");
    if (opt.nprocs != 0 || !opt.rsl_in.empty() || opt.resume || opt.restarts > 0 || opt.show)
      throw UsageError("--clean-up takes only --job-id, --hostfile and the ssh options");
    return opt;
  }
  if (opt.show && opt.dry_run)
    throw UsageError(
        "--show and --dry-run: choose one (--show prints the starter's command "
        "line, --dry-run the allocation as RSL)");
  if (opt.allow_new_args && !opt.resume)
    throw UsageError("--allow-new-args goes with --resume (a fresh run takes any arguments)");
  if (opt.rsl_in.empty()) {
    if (opt.program.empty()) throw UsageError("missing program: say what to run after the options");
  } else {
    if (opt.max_procs != 0)
      throw UsageError("--max-procs cannot be combined with --rsl (the RSL file gives the slots)");
    if (opt.nprocs != 0)
      throw UsageError("--rsl takes the process counts from the RSL file; leave out -p");
    if (!opt.program.empty())
      throw UsageError("--rsl takes the program and its arguments from the RSL file; '" +
                       opt.program + "' is not expected");
    if (opt.stage)
      throw UsageError("--stage cannot be combined with --rsl (the RSL names the paths to run)");
  }
  if (!opt.rsl_in.empty() && !opt.rsl_out.empty())
    throw UsageError("--rsl-out cannot be combined with --rsl (the allocation is already a file)");
  check_checkpoint_options(opt);
  // A recovery in place counts as a restart: without --restarts, each spare allows one.
  if (opt.spares > 0 && opt.restarts == 0) opt.restarts = opt.spares;
  // Inside a Slurm allocation the allocation's nodes are the candidates (slurm.h).
  const char* slurm_job = std::getenv("SLURM_JOB_ID");
  if (opt.hostfile.empty() && opt.rsl_in.empty() && !(slurm_job && *slurm_job)) {
    if (opt.dry_run)
      throw UsageError(
          "--dry-run needs a host file (--hostfile or BSPG_HOSTFILE) or a Slurm allocation");
    if (!opt.rsl_out.empty())
      throw UsageError(
          "--rsl-out needs a host file (--hostfile or BSPG_HOSTFILE) or a Slurm allocation");
    if (opt.stage) throw UsageError("--stage needs a host file (--hostfile or BSPG_HOSTFILE)");
  }
  return opt;
}

std::string usage_text() {
  return "Usage: bsprun -p N [--hostfile FILE] [OPTIONS] PROGRAM [ARGS...]\n"
         "       bsprun [--max-procs N] [--hostfile FILE] [OPTIONS] PROGRAM [ARGS...]"
         "  (master mode)\n"
         "       bsprun --rsl FILE [--hostfile FILE] [OPTIONS]\n"
         "       bsprun --clean-up --job-id ID [--hostfile FILE]\n"
         "Try 'bsprun --help' for more information.\n";
}

// bsprun(1) as plain text: generated at build time from man/pages/bsprun.1.md, the source of the
// manual page too, with this build's MPI and starter filled in (man/mangen.cmake).
extern const char kBsprunManual[];

std::string help_text() { return kBsprunManual; }

}  // namespace bspg::launcher
