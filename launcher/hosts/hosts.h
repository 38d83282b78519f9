// hosts.h - candidate hosts for bsprun: host files, SSH probing, staging, OpenSSH client config.
//
// A host file names candidate hosts (YAML, or an Open MPI style plain file). probe_hosts asks the
// candidates over SSH (libssh) for their load, cores, memory and name, many at once from a few
// threads, each within a timeout; bsprun ranks the answers. ssh_config_for writes the same per-host
// user, port, identity and known_hosts as an OpenSSH client config, so that Open MPI's own ssh
// start (plm_rsh_agent "ssh -F file") reaches the hosts exactly the way the probe did.
//
// Settings a host leaves empty (user, identity, known_hosts; port 22) come from the user's ssh
// configuration (~/.ssh/config, /etc/ssh/ssh_config) in both the probe and the generated config.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace bspg::hosts {

struct HostSpec {
  std::string name;     // shown in output and used as RSL resourceManagerContact
  std::string address;  // where to connect; default = name
  int slots = 0;        // most processes there; 0 = its core count (from the probe)
  std::string site;     // hosts of one site form one subjob; empty = own subjob
  std::string user;     // empty = current user (or ssh config for plain files)
  int port = 22;
  std::string identity;     // private key file; empty = libssh defaults (~/.ssh/id_*, agent)
  std::string known_hosts;  // empty = ~/.ssh/known_hosts
  int line = 0;             // line in the host file (for messages)
};

// Every problem in a host file: "path:line: message".
struct HostFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Reads a host file: YAML (`defaults` and `hosts`, see hostfiles/README.md) or Open MPI plain
// (`host [slots=N] [max_slots=N]` lines, `#` comments). `~` is expanded; relative identity and
// known_hosts paths are taken relative to the host file's directory (the result is absolute).
// The file is untrusted: only a regular file of at most 16 MiB is read, and every value must have
// its legal form (host names, IPv4/IPv6 addresses, user names, absolute paths; no control
// characters, nothing starting with '-'). Throws HostFileError ("path:line: message", escaped).

std::vector<HostSpec> read_hostfile(const std::string& path);
// The same for a host file's text already in memory; `path` names it in messages, and relative
// paths in it are taken relative to its directory.
std::vector<HostSpec> parse_hostfile_text(const std::string& text, const std::string& path);

// The entry named `name` (names are unique in a host file), or nullptr.
const HostSpec* find_host(const std::vector<HostSpec>& hosts, const std::string& name);
// That entry, or one that reaches `name` as the user's ssh configuration says (address = name).
HostSpec host_named(const std::vector<HostSpec>& hosts, const std::string& name);

// Most probes open at once by default. A probe that waits costs one socket and a few kB, and one
// poll loop serves them all, so this many silent candidates take about one timeout; more than
// this wait for a free slot. Fitted to the open-file limit (RLIMIT_NOFILE) when that is lower.
constexpr int kDefaultFanout = 4096;

// A site's first host, to which every probed host measures a TCP round trip (connect to its ssh
// port): the round trips between sites.
struct RoundTripTarget {
  std::string site, address;
  int port = 22;
};

struct ProbeOptions {
  int timeout_ms = 5000;                  // bound for one host: connect, key check, login, command
  bool accept_unknown_host_keys = false;  // accept (and record in known_hosts) an unlisted host
  int fanout = kDefaultFanout;            // most hosts probed at once (at least 1)
  std::string program;  // absolute path to check on each host, in the same command; empty = none
  // Each host also times a TCP connect to each of these (bash's /dev/tcp, where bash exists; at
  // most 1 s each): ProbeResult::site_round_trips_ms.
  std::vector<RoundTripTarget> round_trip_targets;
  // Problems of this machine (memory, open files, threads), one line each, each said once.
  // Empty: written to stderr as "<program name>: <line>".
  std::function<void(const std::string&)> report_local;
};

// What the probe found at ProbeOptions::program on a host.
enum class ProgramStatus { kUnchecked, kOk, kNotFound, kNotRegularFile, kNotExecutable };

// "present and executable", "not found", "not a regular file", "not executable", "not checked".
const char* describe(ProgramStatus status);

struct ProbeResult {
  HostSpec host;
  bool ok = false;
  // When !ok: one short reason, e.g. "connection refused", "timed out after 5.0 s",
  // "authentication refused for user root", "unknown host key (not in /path/known_hosts)",
  // "host key CHANGED (possible impersonation) per /path/known_hosts", "command failed: ...",
  // "impossible load average '-100' in /proc/loadavg", or "not probed: ..." when this machine
  // could not (out of memory, out of file descriptors; reported once on its own).
  std::string error;
  std::string hostname;  // what the host calls itself
  int cores = 0;         // hwloc core count where bspg-hostinfo is installed there, else nproc
  double load1 = 0, load5 = 0, load15 = 0;
  long long mem_available_kb = 0;
  ProgramStatus program_status = ProgramStatus::kUnchecked;  // when ok and opt.program is set
  double elapsed_s = 0;                                      // how long this probe took
  double round_trip_ms = -1;  // TCP round trip from this machine (kernel's estimate); -1 unknown
  // From this host to the first host of each site it reached (ProbeOptions::round_trip_targets).
  std::vector<std::pair<std::string, double>> site_round_trips_ms;
};

// Probes the hosts with at most opt.fanout at once, from a few threads whatever the number of hosts
// (non-blocking sessions in poll loops); results are in the order of `hosts`. Each probe has its
// own deadline (opt.timeout_ms from its start), and a probe that times out ends its command on the
// host. With no more candidates than the fan-out, the wall time is about that of the slowest probe.
std::vector<ProbeResult> probe_hosts(const std::vector<HostSpec>& hosts, const ProbeOptions& opt);

// What a command run on a host over SSH gave (run_on_hosts).
struct CommandResult {
  HostSpec host;
  bool ok = false;    // logged in and the command ran to its end; else `error` says why not
  std::string error;  // as ProbeResult::error ("connection refused", "timed out after 5.0 s", ...)
  std::string out, err;  // its output (each at most 1 MiB), untrusted
  int exit_status = -1;  // -1 when it ended by a signal
  double elapsed_s = 0;
  double round_trip_ms = -1;  // TCP round trip (kernel's estimate at the end); -1 unknown
};

// Runs `command` (for the host's login shell) on every host, as probe_hosts runs its probe: at
// most opt.fanout at once, each within opt.timeout_ms from its start (a command still running
// then is killed on the host), host keys checked as for probing. Results in the order of `hosts`.
std::vector<CommandResult> run_on_hosts(const std::vector<HostSpec>& hosts,
                                        const std::string& command, const ProbeOptions& opt);

// The probe for a process already running on the host (a task srun started on a Slurm node): a
// sh script that prints what the SSH probe reads (opt.program checked when set). It has no
// bound of its own: the caller bounds the step.
std::string probe_script(const ProbeOptions& opt);
// Reads a host's output of probe_script into `result` (hostname, cores, loads, memory, program
// status; `ok` is not set). Returns "" or what is wrong with the answer, as the SSH probe says it.
std::string read_probe_script_output(const std::string& output, bool program_checked,
                                     ProbeResult& result);

// `text` as a printf format that prints it: every byte but letters, digits, '/', '.', '_' and '-'
// as an octal escape (\ooo), so that it holds no quote, space or other character a shell reads.
std::string octal_escaped(const std::string& text);

// sh that sets variable `name` to `value` whatever bytes it holds: `name=$(printf "ESCAPED_");
// name=${name%_}; ` (the '_' keeps $(...) from eating trailing newlines of the value).
std::string shell_assignment(const std::string& name, const std::string& value);

// The command line for run_on_hosts that runs `script` with sh whatever the login shell (sh, bash,
// zsh, csh, fish), and cannot outlive the caller: killed when the SSH channel closes, and after
// ceil(timeout_ms) + 1 s at the latest where `timeout` exists. `script` must hold no single quote
// and no backslash but octal_escaped()'s; values go in with shell_assignment().
std::string guarded_command(const std::string& script, int timeout_ms);

// How much of a script's listing came back (lines_between).
enum class Listing { kMissing, kCutShort, kComplete };
// The lines of `output` between a line `begin` and a line `end` (whatever shell start-up files
// print first is skipped), in `lines`; kCutShort when `end` never came, kMissing when `begin`
// did not either.
Listing lines_between(const std::string& output, const std::string& begin, const std::string& end,
                      std::vector<std::string>& lines);

struct StageResult {
  bool ok = false;
  std::string remote_path;  // absolute path of the executable on the host
  std::string error;
  bool copied = false;  // false when an identical file was already there
};

// Copies an executable over SFTP into ~/.cache/bspg/stage/<size>-<content hash>/<name> on the host,
// unless that file is already there; keeps the exec bits. opt.timeout_ms bounds the login and each
// SFTP operation.
StageResult stage_executable(const HostSpec& host, const std::string& local_path,
                             const ProbeOptions& opt);

struct RelayResult {
  bool ok = false;
  std::string error;        // names the host it happened on
  std::string host;         // that host's name
  std::uint64_t bytes = 0;  // copied
};

// Copies the file at from_path on `from` to to_path on `to`, through this machine over SFTP (the
// hosts need not reach each other). Relative paths start at the user's home directory. The copy
// is written under a private name, synced where the server offers fsync@openssh.com, and renamed
// over to_path, so to_path is whole or as it was; missing directories are created (mode 0700).
// opt.timeout_ms bounds each login and each SFTP operation.
RelayResult relay_file(const HostSpec& from, const std::string& from_path, const HostSpec& to,
                       const std::string& to_path, const ProbeOptions& opt);

// Text of an OpenSSH client config with one `Host <name>` block per host (HostName, User, Port,
// IdentityFile, UserKnownHostsFile, StrictHostKeyChecking yes, BatchMode yes, ConnectTimeout),
// followed by the user's own ssh configuration for whatever a host leaves unset. Values are
// quoted as OpenSSH reads them; std::invalid_argument for a name that is not a host name or a
// value with a control character (read_hostfile never gives such values).
std::string ssh_config_for(const std::vector<HostSpec>& hosts);

}  // namespace bspg::hosts
