// master.cpp - master mode: reading bsprun's description of the slots, spawning the processes
// of bsp_begin(P) on the first P slots, merging, and parting at bsp_end.
#include "master.hpp"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "errors.hpp"
#include "mpi_state.hpp"
#include "part_location.hpp"
#include "spmd_part.hpp"
#include "transport.hpp"
#include "whole_number.hpp"

namespace bspg::master {
namespace {

// Marks the processes a master spawned, in their environment (given with the spawn only).
// Its value, AVAILABLE:STAYS, tells them the processes the master has (bsp_nprocs() before
// bsp_begin) and whether they wait between sections (1) or end at bsp_end (0). Short: Open MPI
// takes at most 255 bytes of environment with a spawn (see read_after_join).
constexpr const char* kSpawnedMark = "BSPG_SPAWNED_BY_MASTER";
// Set in the processes a nested run's pid 0 spawns: they know their run is a nested one.
constexpr const char* kNestedMark = "BSPG_NESTED_RUN";
// The spawn info key of the spawned processes' environment (NAME=VALUE lines): Open MPI 5 renamed
// it, and warns about the old name.
#if defined(OPEN_MPI) && defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5
constexpr const char* kEnvironmentKey = "PMIX_ENVAR";
#else
constexpr const char* kEnvironmentKey = "env";
#endif

struct Slot {
  std::string host;
  int group;  // hosts of one group form one subjob
};

struct Settings {
  bool read = false;
  Role role = Role::Spmd;
  int available = 1;
  std::vector<Slot> slots;             // empty: every process on this machine
  std::vector<std::string> passed_on;  // NAME=VALUE for the spawned processes
  bool nested = false;  // a nested run's spawner: one section, spawned from MPI_COMM_SELF
};

Settings settings;
MPI_Comm joined = MPI_COMM_NULL;  // the section's processes, master first, while inside
MPI_Comm link = MPI_COMM_NULL;    // the intercommunicator of the spawn (the parent's, if spawned)
MPI_Comm pool_comm = MPI_COMM_NULL;  // master and all it spawned so far, master first

// What a nested run's spawner set aside at begin_nested, for end_nested: its own section's state,
// and the subjob variables the nested bsp_begin sets (name, value; unset where it had none).
struct OuterState {
  Settings settings;
  MPI_Comm joined, link, pool_comm;
  std::vector<std::pair<bool, std::string>> subjob_variables;  // in kSubjobVariables' order
};
std::vector<OuterState> outer_states;
constexpr const char* kSubjobVariables[] = {"BSPG_SUBJOB", "BSPG_NSUBJOBS", "BSPG_SUBJOB_SIZES"};

// Before the merge every spawned process tells the master (over `link`) that it is there, or that
// it stops: an MPI_Abort in a spawned process does not end the master on every MPI (Open MPI 5
// ends the spawned job only), and the master would wait in the merge for ever.
constexpr int kJoinTag = 0x6a6e;
// The word: kJoining, kStopping (it said why), or kEndedEarly | status << 8 (the program ended
// before bsp_begin: the master says so, once, whichever spawned processes end so).
constexpr int kJoining = 1, kStopping = 0, kEndedEarly = 2;

void tell_master(int word) { MPI_Send(&word, 1, MPI_INT, 0, kJoinTag, link); }

void tell_master_stopping(int) {
  set_before_abort(nullptr);
  tell_master(kStopping);
}

// After the join the master sends each process it spawned the variables it reads only from then
// on (read_after_join): a length (8 bytes), then NAME=VALUE lines.
constexpr int kLateEnvironmentTag = 0x6a6f;

// Whether a spawned process reads this NAME=VALUE only once it joined the section (bspg's own
// settings: profile and checkpoint paths, subjobs, ...). Those come over the spawn's
// intercommunicator, which no length binds, where the spawn's environment holds at most 255 bytes
// (Open MPI's limit for an info value), which one long path alone would fill. What the program or
// the MPI may read at start (the user's and the MPI's variables) and what bspg reads when MPI
// starts come with the spawn.
bool read_after_join(const std::string& assignment) {
  if (assignment.rfind("BSPG_", 0) != 0) return false;
  for (const char* early : {"BSPG_SPAWNED_BY_MASTER=", "BSPG_SPMD_PART=", "BSPG_EXIT_NOTES="})
    if (assignment.rfind(early, 0) == 0) return false;
  return true;
}

void send_late_environment(const std::string& text, int to) {
  const std::uint64_t length = text.size();
  MPI_Send(&length, 1, MPI_UINT64_T, to, kLateEnvironmentTag, link);
  MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, kLateEnvironmentTag, link);
}

// The master: waits idly until every spawned process said it joins; stops when one says it stops
// (quietly where that process said why). first_pid: the pid of the first process spawned.
void await_spawned(int count, int first_pid) {
  std::vector<int> words(static_cast<std::size_t>(count), -1);
  std::vector<MPI_Request> requests(static_cast<std::size_t>(count));
  for (int r = 0; r < count; ++r)
    MPI_Irecv(&words[static_cast<std::size_t>(r)], 1, MPI_INT, r, kJoinTag, link,
              &requests[static_cast<std::size_t>(r)]);
  for (int joined_so_far = 0; joined_so_far < count; ++joined_so_far) {
    int which = MPI_UNDEFINED;
    wait_any_idle(count, requests.data(), &which);
    const int word = words[static_cast<std::size_t>(which)];
    if (word == kJoining) continue;
    set_abort_comm(link);  // the others too, where the MPI's abort reaches them
    if ((word & 0xff) == kEndedEarly) {
      std::fflush(stdout);
      std::fprintf(stderr,
                   "bspg: process %d: exit: the program ended (status %d) before bsp_begin, which "
                   "process 0 waits in\n",
                   first_pid + which, word >> 8);
      std::fflush(stderr);
    }
    stop_job(1);
  }
}

constexpr const char* kLettersDigits =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

// Names that reach Open MPI's "host" list and "env" text: nothing that could split them.
bool valid_host_name(const std::string& name) {
  return !name.empty() && name.size() <= 255 && name[0] != '-' && name[0] != '.' &&
         name.find_first_not_of(std::string(kLettersDigits) + "-._") == std::string::npos;
}

bool valid_variable_name(const std::string& name) {
  return !name.empty() && std::isdigit(static_cast<unsigned char>(name[0])) == 0 &&
         name.find_first_not_of(std::string(kLettersDigits) + "_") == std::string::npos;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  while (true) {
    std::size_t end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    if (end == std::string::npos) return parts;
    begin = end + 1;
  }
}

// A spawned process, once it said it joins: the master's variables for it, set here.
void receive_late_environment() {
  std::uint64_t length = 0;
  MPI_Request request;
  MPI_Irecv(&length, 1, MPI_UINT64_T, 0, kLateEnvironmentTag, link, &request);
  int which = 0;
  wait_any_idle(1, &request, &which);  // the master sends once every spawned process is there
  std::string text(length, '\0');
  MPI_Recv(text.data(), static_cast<int>(length), MPI_CHAR, 0, kLateEnvironmentTag, link,
           MPI_STATUS_IGNORE);
  for (const std::string& line : split(text, '\n')) {
    const std::size_t equals = line.find('=');
    if (equals != std::string::npos && equals > 0)
      setenv(line.substr(0, equals).c_str(), line.substr(equals + 1).c_str(), 1);
  }
}

[[noreturn]] void bad_variable(const char* call, const char* name, const std::string& value,
                               const char* want) {
  fail(call, "environment variable %s='%.200s%s' is not %s (bsprun sets it in master mode)", name,
       value.c_str(), value.size() > 200 ? "..." : "", want);
}

struct SpawnMark {
  int available = 1;
  bool stays = false;
};

// What the master told a spawned process in kSpawnedMark (AVAILABLE:STAYS).
SpawnMark spawn_mark(const char* call) {
  const char* text = std::getenv(kSpawnedMark);
  const std::string value = text != nullptr ? text : "";
  const std::size_t colon = value.find(':');
  const long available = whole_number(value.substr(0, colon), 1, 1000000);
  const std::string stays = colon == std::string::npos ? "" : value.substr(colon + 1);
  if (available < 0 || (stays != "0" && stays != "1"))
    bad_variable(call, kSpawnedMark, value, "AVAILABLE:STAYS (a number of processes, then 0 or 1)");
  return {static_cast<int>(available), stays == "1"};
}

void read_slots(const char* call, const std::string& text) {
  std::vector<std::string> entries = split(text, ',');
  if (entries.size() != static_cast<std::size_t>(settings.available))
    fail(call,
         "environment variable BSPG_MASTER_SLOTS names %zu slots, but BSPG_MASTER_PROCS is %d",
         entries.size(), settings.available);
  for (const std::string& entry : entries) {
    std::size_t slash = entry.rfind('/');
    long group = slash == std::string::npos
                     ? -1
                     : whole_number(entry.substr(slash + 1), 0, settings.available - 1);
    std::string host = slash == std::string::npos ? entry : entry.substr(0, slash);
    if (group < 0 || !valid_host_name(host))
      bad_variable(call, "BSPG_MASTER_SLOTS", text,
                   "a list of HOST/SUBJOB entries separated by commas");
    settings.slots.push_back({host, static_cast<int>(group)});
  }
}

void read_passed_on(const char* call, const std::string& text) {
  for (const std::string& name : split(text, ',')) {
    if (!valid_variable_name(name))
      bad_variable(call, "BSPG_MASTER_ENV", text, "a list of variable names separated by commas");
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) continue;
    // Open MPI takes the variables as one text of NAME=VALUE lines.
    if (std::strchr(value, '\n'))
      fail(
          call,
          "environment variable %s holds a line break, which cannot be passed to spawned processes",
          name.c_str());
    settings.passed_on.push_back(name + "=" + value);
  }
}

// Whether a master spawned this process. The first call routes its reports: until the merge only
// the intercommunicator reaches the master, and the pid it will have names it.
bool spawned() {
  static int known = -1;
  if (known >= 0) return known == 1;
  MPI_Comm parent = MPI_COMM_NULL;
  MPI_Comm_get_parent(&parent);
  known = parent != MPI_COMM_NULL && std::getenv(kSpawnedMark) != nullptr ? 1 : 0;
  if (known == 1) {
    link = parent;
    set_abort_comm(parent);
    set_before_abort(tell_master_stopping);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    set_reporting_pid(rank + 1);
  }
  return known == 1;
}

const Settings& read_settings(const char* call) {
  if (settings.read) return settings;
  settings.read = true;
  if (spawned()) {
    settings.role = Role::Spawned;
    return settings;
  }
  const char* procs = std::getenv("BSPG_MASTER_PROCS");
  int world_size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  // Started with others (-p N), the processes are all there: master mode does not apply.
  if (procs == nullptr || *procs == '\0' || world_size > 1) return settings;
  long n = whole_number(procs, 1, 1000000);
  if (n < 0) bad_variable(call, "BSPG_MASTER_PROCS", procs, "a number of processes (1 to 1000000)");
  settings.role = Role::Master;
  settings.available = static_cast<int>(n);
  if (const char* slots = std::getenv("BSPG_MASTER_SLOTS"); slots && *slots)
    read_slots(call, slots);
  if (const char* names = std::getenv("BSPG_MASTER_ENV"); names && *names)
    read_passed_on(call, names);
  return settings;
}

// The program's command line as it was started (the spawned processes get the same).
std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> words;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\0', begin);
    if (end == std::string::npos) end = text.size();
    words.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return words;
}

// One spawn request: a subjob's processes, and where they go.
struct AppContext {
  int subjob = 0;
  int count = 0;
  std::string hosts;  // "h1,h1,h2": one entry per process (empty: this machine)
};

struct Plan {
  std::vector<AppContext> apps;  // the spawned processes by subjob, in subjob order
  std::vector<int> sizes;        // processes per subjob, the master's included
};

// Subjobs of the first nprocs slots are numbered by first appearance: the master's is 0. The
// processes to spawn are those of slots first..nprocs-1 (the others run already).
Plan plan_for(int nprocs, int first) {
  Plan plan;
  if (settings.slots.empty()) {
    plan.sizes = {nprocs};
    if (nprocs > first) plan.apps.push_back({0, nprocs - first, ""});
    return plan;
  }
  std::vector<int> subjob_of_group(static_cast<std::size_t>(settings.available), -1);
  for (int i = 0; i < nprocs; ++i) {
    const Slot& slot = settings.slots[static_cast<std::size_t>(i)];
    int& subjob = subjob_of_group[static_cast<std::size_t>(slot.group)];
    if (subjob < 0) {
      subjob = static_cast<int>(plan.sizes.size());
      plan.sizes.push_back(0);
      plan.apps.push_back({subjob, 0, ""});
    }
    ++plan.sizes[static_cast<std::size_t>(subjob)];
    if (i < first) continue;  // the master's own slot, or a process that waits in the pool
    AppContext& app = plan.apps[static_cast<std::size_t>(subjob)];
    ++app.count;
    app.hosts += (app.hosts.empty() ? "" : ",") + slot.host;
  }
  return plan;
}

// BSPG_SUBJOB_SIZES's value: the subjobs' sizes, comma-separated.
std::string sizes_text(const Plan& plan) {
  std::string sizes;
  for (int s : plan.sizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(s);
  return sizes;
}

// The spawned processes' environment: what comes with the spawn, and what after the join.
struct SpawnEnvironment {
  std::string at_spawn;
  std::string after_join;
};

SpawnEnvironment environment_for(int subjob, const Plan& plan) {
  SpawnEnvironment environment;
  // The subjob's variables are the program's to read from its start (bsprun(1)), and short.
  std::string& text = environment.at_spawn;
  text = std::string(kSpawnedMark) + "=" + std::to_string(settings.available) +
         (pool_stays() ? ":1" : ":0") + "\nBSPG_SUBJOB=" + std::to_string(subjob) +
         "\nBSPG_NSUBJOBS=" + std::to_string(plan.sizes.size()) +
         "\nBSPG_SUBJOB_SIZES=" + sizes_text(plan);
  if (settings.nested) text += "\n" + std::string(kNestedMark) + "=1";
  for (const std::string& variable : settings.passed_on) {
    std::string& part = read_after_join(variable) ? environment.after_join : text;
    part += (part.empty() ? "" : "\n") + variable;
  }
  // The spawned processes wait between sections (a later one, named with bsp_init, reuses them:
  // Open MPI 4 hangs in communicators over more spawns than a few). Where bsp_init named the part,
  // they run that part and never main (but MulticoreBSP's C++ begin: main up to their first).
  if (current_spmd_part() != nullptr && !others_run_main()) {
    const PartLocation where = locate(current_spmd_part());
    if (where.object < 0)
      fail("bsp_begin", "cannot name the SPMD part of this section to the spawned processes");
    char part[64];
    std::snprintf(part, sizeof part, "%d:%" PRIx64, where.object, where.offset);
    text += "\nBSPG_SPMD_PART=" + std::string(part);
  }
  return environment;
}

// The MPI's error text on one line: its first (MPICH adds a stack of calls on the next ones).
std::string error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  std::string line(text, static_cast<std::size_t>(length));
  line = line.substr(0, line.find('\n'));
  if (!line.empty() && line.back() == ':') line.pop_back();
  if (line.size() > 13 && line.compare(line.size() - 13, 13, ", error stack") == 0)
    line.resize(line.size() - 13);
  return line;
}

// Starts the processes of `plan` (count of them), collectively over `parents` (the master is its
// rank 0), and returns the intercommunicator to them; `late` gets each one's variables for after
// the join, in the order of their ranks.
MPI_Comm spawn(const Plan& plan, int count, MPI_Comm parents, std::vector<std::string>& late) {
  const int nprocs = count + 1;
  std::vector<std::string> command = own_command_line();
  if (command.empty())
    fail("bsp_begin", "cannot read this program's command line from /proc/self/cmdline");
  std::vector<char*> arguments;
  for (std::size_t i = 1; i < command.size(); ++i) arguments.push_back(command[i].data());
  arguments.push_back(nullptr);
  char directory[4096];
  if (getcwd(directory, sizeof directory) == nullptr)
    fail("bsp_begin", "cannot read the working directory: %s", std::strerror(errno));

  std::vector<char*> commands;
  std::vector<char**> argvs;
  std::vector<int> counts;
  std::vector<MPI_Info> infos;
  for (const AppContext& app : plan.apps) {
    if (app.count == 0) continue;
    MPI_Info info;
    MPI_Info_create(&info);
    if (!app.hosts.empty()) MPI_Info_set(info, "host", app.hosts.c_str());
    MPI_Info_set(info, "wdir", directory);
#if defined(OPEN_MPI)
    // A nested run's processes join those of the outer run on this machine, whatever its slots.
    if (settings.nested) MPI_Info_set(info, "map_by", ":OVERSUBSCRIBE");
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5
    // And unbound: PRRTE otherwise refuses to place more processes than the allocation's cpus
    // ("binding processes to more cpus than are available"), even with binding policy NONE.
    if (settings.nested) MPI_Info_set(info, "bind_to", "none:overload-allowed");
#endif
#endif
    const SpawnEnvironment environment = environment_for(app.subjob, plan);
    if (environment.at_spawn.size() >= MPI_MAX_INFO_VAL)
      fail("bsp_begin",
           "the environment the spawned processes need at their start (%zu bytes: the -x "
           "variables and OMPI_MCA_*) is longer than this MPI's limit for an info value (%d "
           "bytes); pass fewer or shorter variables",
           environment.at_spawn.size(), MPI_MAX_INFO_VAL - 1);
    MPI_Info_set(info, kEnvironmentKey, environment.at_spawn.c_str());
    late.insert(late.end(), static_cast<std::size_t>(app.count), environment.after_join);
    commands.push_back(command[0].data());
    argvs.push_back(arguments.data());
    counts.push_back(app.count);
    infos.push_back(info);
  }
  std::vector<int> codes(static_cast<std::size_t>(count), MPI_SUCCESS);
  MPI_Comm_set_errhandler(parents, MPI_ERRORS_RETURN);
  MPI_Comm children = MPI_COMM_NULL;
  int rc =
      MPI_Comm_spawn_multiple(static_cast<int>(commands.size()), commands.data(), argvs.data(),
                              counts.data(), infos.data(), 0, parents, &children, codes.data());
  MPI_Comm_set_errhandler(parents, MPI_ERRORS_ARE_FATAL);
  for (MPI_Info& info : infos) MPI_Info_free(&info);
  for (int code : codes)
    if (rc == MPI_SUCCESS && code != MPI_SUCCESS) rc = code;
  if (rc != MPI_SUCCESS && settings.nested)
    fail("bsp_begin",
         "a nested run needs process spawning, which %s lacks here (MPI_Comm_spawn failed: %s); "
         "could not start %d more process%s for the nested bsp_begin(%d)",
         BSPG_MPI_NAME, error_text(rc).c_str(), nprocs - 1, nprocs == 2 ? "" : "es", nprocs);
  if (rc != MPI_SUCCESS)
    fail("bsp_begin",
         "could not start %d more process%s of %s: %s's MPI_Comm_spawn failed (%s); master mode "
         "needs it, start all processes at once instead (bsprun -p %d)",
         nprocs - 1, nprocs == 2 ? "" : "es", command[0].c_str(), BSPG_MPI_NAME,
         error_text(rc).c_str(), nprocs);
  return children;
}

// A waiting spawned process's part in the master's spawn (only the master's arguments count).
MPI_Comm take_part_in_spawn() {
  char command[] = "";
  char* no_arguments[] = {nullptr};
  char** argvs[] = {no_arguments};
  char* commands[] = {command};
  int counts[] = {1};
  MPI_Info infos[] = {MPI_INFO_NULL};
  MPI_Comm children = MPI_COMM_NULL;
  MPI_Comm_spawn_multiple(1, commands, argvs, counts, infos, 0, pool_comm, &children,
                          MPI_ERRCODES_IGNORE);
  return children;
}

// The pool and the processes just spawned (over `children`) become the new pool, in that order.
// The spawn's intercommunicator is kept only where the section is the last: then bsp_end
// disconnects it, and master and spawned processes finalize each on its own. (Open MPI 4 waits
// for ever in a disconnect of the merged intracommunicator; that of the intercommunicator works.)
void grow_pool(MPI_Comm children) {
  MPI_Comm bigger = MPI_COMM_NULL;
  MPI_Intercomm_merge(children, 0, &bigger);  // low: the pool first
  if (pool_stays())
    MPI_Comm_disconnect(&children);
  else
    link = children;
  if (pool_comm != MPI_COMM_NULL) MPI_Comm_free(&pool_comm);
  pool_comm = bigger;
}

int size_of(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  return size;
}

int rank_in(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

void set_subjob_environment(const Plan& plan) {
  setenv("BSPG_SUBJOB", "0", 1);
  setenv("BSPG_NSUBJOBS", std::to_string(plan.sizes.size()).c_str(), 1);
  setenv("BSPG_SUBJOB_SIZES", sizes_text(plan).c_str(), 1);
}

}  // namespace

void note_how_started() { spawned(); }

void stop_before_begin(int status) {
  set_before_abort(nullptr);
  tell_master(kEndedEarly | (status & 0xff) << 8);
  // The master's abort ends this process (Open MPI 4), or ends the master's job only (Open MPI
  // 5): several spawned processes that called MPI_Abort themselves crashed inside it, so each
  // ends quietly once it had time to come (the master spoke for all).
  for (int i = 0; i < 50; ++i) usleep(100000);
  _exit(1);
}

bool pool_stays() {
  if (settings.nested) return false;  // a nested run has one section: its processes end with it
  if (read_settings("bsp_begin").role == Role::Spawned) return spawn_mark("bsp_begin").stays;
  return bspg_owns_mpi();  // the master's: a later section may follow
}

Role role(const char* call) { return read_settings(call).role; }

int available(const char* call) {
  const Settings& s = read_settings(call);
  if (s.role != Role::Spawned) return s.available;
  return spawn_mark(call).available;
}

Membership join(int maxprocs, const StartMessage* received) {
  const Settings& s = read_settings("bsp_begin");
  int nprocs = 0;
  if (s.role == Role::Master) {
    if (maxprocs < 1) fail("bsp_begin", "maxprocs is %d; it must be at least 1", maxprocs);
    nprocs = maxprocs < s.available ? maxprocs : s.available;
    const int have = pool_comm == MPI_COMM_NULL ? 1 : size_of(pool_comm);
    Plan plan = plan_for(nprocs, have);
    set_subjob_environment(plan);
    if (pool_comm != MPI_COMM_NULL)
      exchange_start_message(pool_comm, {kBegin, nprocs, locate(current_spmd_part())});
    if (nprocs == 1 && pool_comm == MPI_COMM_NULL) {
      MPI_Comm_dup(s.nested ? MPI_COMM_SELF : MPI_COMM_WORLD, &joined);
    } else {
      if (nprocs > have) {
        MPI_Comm parents = pool_comm == MPI_COMM_NULL ? MPI_COMM_SELF : pool_comm;
        std::vector<std::string> late;
        link = spawn(plan, nprocs - have, parents, late);
        await_spawned(nprocs - have, have);
        for (std::size_t r = 0; r < late.size(); ++r)
          send_late_environment(late[r], static_cast<int>(r));
        MPI_Comm children = link;
        link = MPI_COMM_NULL;
        grow_pool(children);
      }
      MPI_Comm_split(pool_comm, 0, 0, &joined);
    }
  } else if (received == nullptr) {
    // Spawned for this section: all of this spawn take part.
    set_before_abort(nullptr);
    tell_master(kJoining);
    receive_late_environment();
    MPI_Intercomm_merge(link, 1, &pool_comm);      // high: after the master and those waiting
    if (pool_stays()) MPI_Comm_disconnect(&link);  // see grow_pool
    MPI_Comm_split(pool_comm, 0, rank_in(pool_comm), &joined);
  } else {
    // Waited in the pool since an earlier section.
    nprocs = received->value;
    if (nprocs > size_of(pool_comm)) grow_pool(take_part_in_spawn());
    const int rank = rank_in(pool_comm);
    MPI_Comm_split(pool_comm, rank < nprocs ? 0 : MPI_UNDEFINED, rank, &joined);
    if (joined == MPI_COMM_NULL) return {MPI_COMM_NULL, rank, nprocs};
  }
  set_abort_comm(joined);
  Membership result{MPI_COMM_NULL, 0, 0};
  MPI_Comm_rank(joined, &result.pid);
  MPI_Comm_size(joined, &result.nprocs);
  MPI_Comm_dup(joined, &result.comm);
  return result;
}

void leave() {
  if (joined == MPI_COMM_NULL) return;
  MPI_Comm_free(&joined);
  if (pool_stays()) {
    // Together until the program ends: an abort (of the master, say) still reaches everyone.
    set_abort_comm(pool_comm);
    return;
  }
  set_abort_comm(MPI_COMM_WORLD);
  if (pool_comm != MPI_COMM_NULL) MPI_Comm_free(&pool_comm);
  if (link != MPI_COMM_NULL) MPI_Comm_disconnect(&link);
}

void (*spmd_part_from_master(void (*named)(void)))(void) {
  // The master names it in the environment as OBJECT:OFFSET (hexadecimal).
  const char* text = std::getenv("BSPG_SPMD_PART");
  if (text == nullptr || *text == '\0' || role("bsp_init") != Role::Spawned) return named;
  PartLocation where;
  char* end = nullptr;
  where.object = static_cast<int>(std::strtol(text, &end, 10));
  if (*end != ':' || where.object < 0)
    fail("bsp_init", "environment variable BSPG_SPMD_PART='%.40s' is not OBJECT:OFFSET", text);
  where.offset = std::strtoull(end + 1, &end, 16);
  if (*end != '\0')
    fail("bsp_init", "environment variable BSPG_SPMD_PART='%.40s' is not OBJECT:OFFSET", text);
  return find_part(where);
}

MPI_Comm pool() { return pool_comm; }

void begin_nested(int available) {
  read_settings("bsp_begin");
  OuterState outer{settings, joined, link, pool_comm, {}};
  for (const char* name : kSubjobVariables) {
    const char* value = std::getenv(name);
    outer.subjob_variables.emplace_back(value != nullptr, value != nullptr ? value : "");
  }
  outer_states.push_back(outer);
  Settings inner;
  inner.read = true;
  inner.role = Role::Master;
  inner.available = available;
  inner.passed_on = settings.passed_on;
  inner.nested = true;
  settings = inner;
  joined = link = pool_comm = MPI_COMM_NULL;
}

void end_nested() {
  if (outer_states.empty()) return;
  const OuterState& outer = outer_states.back();
  settings = outer.settings;
  joined = outer.joined;
  link = outer.link;
  pool_comm = outer.pool_comm;
  for (std::size_t i = 0; i < outer.subjob_variables.size(); ++i) {
    if (outer.subjob_variables[i].first)
      setenv(kSubjobVariables[i], outer.subjob_variables[i].second.c_str(), 1);
    else
      unsetenv(kSubjobVariables[i]);
  }
  // The outer section's: its processes' communicator where a master started them, else the job's.
  set_abort_comm(joined != MPI_COMM_NULL ? joined : MPI_COMM_WORLD);
  outer_states.pop_back();
}

bool in_nested_run() {
  if (settings.nested) return true;
  const char* mark = std::getenv(kNestedMark);
  return mark != nullptr && std::string(mark) == "1";
}

void end_pool() {
  if (pool_comm == MPI_COMM_NULL) return;
  if (read_settings("exit").role == Role::Master) exchange_start_message(pool_comm, {kEnd, 0, {}});
  set_abort_comm(MPI_COMM_WORLD);
  // Freed, not disconnected: everyone finalizes next, and Open MPI 4's disconnect of a
  // communicator that spans three spawns or more waits for ever.
  MPI_Comm_free(&pool_comm);
}

}  // namespace bspg::master
