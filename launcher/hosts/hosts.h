// hosts.h - candidate hosts for bsprun: host files, SSH probing, staging, OpenSSH client config.
//
// A host file names candidate hosts (YAML, or an Open MPI style plain file). probe_hosts asks every
// candidate at once over SSH (libssh) for its load, cores, memory and name, each within a timeout;
// bsprun ranks the answers. ssh_config_for writes the same per-host user, port, identity and
// known_hosts as an OpenSSH client config, so that Open MPI's own ssh start (plm_rsh_agent
// "ssh -F file") reaches the hosts exactly the way the probe did.
//
// Settings a host leaves empty (user, identity, known_hosts; port 22) come from the user's ssh
// configuration (~/.ssh/config, /etc/ssh/ssh_config) in both the probe and the generated config.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace bspg::hosts {

struct HostSpec {
  std::string name;          // shown in output and used as RSL resourceManagerContact
  std::string address;       // where to connect; default = name
  int slots = 0;             // most processes there; 0 = its core count (from the probe)
  std::string site;          // hosts of one site form one subjob; empty = own subjob
  std::string user;          // empty = current user (or ssh config for plain files)
  int port = 22;
  std::string identity;      // private key file; empty = libssh defaults (~/.ssh/id_*, agent)
  std::string known_hosts;   // empty = ~/.ssh/known_hosts
  int line = 0;              // line in the host file (for messages)
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

struct ProbeOptions {
  int timeout_ms = 5000;                  // bound for one host: connect, key check, login, command
  bool accept_unknown_host_keys = false;  // accept (and record in known_hosts) a host not listed there
  std::string program;                    // path to check on each host; empty = no check
};

// What the probe found at ProbeOptions::program on a host.
enum class ProgramStatus { kUnchecked, kOk, kNotFound, kNotRegularFile, kNotExecutable };

struct ProbeResult {
  HostSpec host;
  bool ok = false;
  std::string error;          // when !ok: one short reason, e.g. "connection refused", "timed out after 5.0 s",
                              // "authentication refused for user root", "unknown host key (not in /path/known_hosts)",
                              // "host key CHANGED (possible impersonation) per /path/known_hosts", "command failed: ..."
  std::string hostname;       // what the host calls itself
  int cores = 0;              // hwloc core count where bspg-hostinfo is installed there, else nproc
  double load1 = 0, load5 = 0, load15 = 0;
  long long mem_available_kb = 0;
  double elapsed_s = 0;       // how long this probe took
  ProgramStatus program_status = ProgramStatus::kUnchecked;
};

// Probes all hosts concurrently (a thread per host); results are in the order of `hosts`.
// Total wall time is about that of the slowest probe, at most opt.timeout_ms plus a little.
std::vector<ProbeResult> probe_hosts(const std::vector<HostSpec>& hosts, const ProbeOptions& opt);

struct StageResult {
  bool ok = false;
  std::string remote_path;   // absolute path of the executable on the host
  std::string error;
  bool copied = false;       // false when an identical file was already there
};

// Copies an executable over SFTP into ~/.cache/bspg/stage/<size>-<content hash>/<name> on the host,
// unless that file is already there; keeps the exec bits. opt.timeout_ms bounds the login and each
// SFTP operation.
StageResult stage_executable(const HostSpec& host, const std::string& local_path, const ProbeOptions& opt);

// Text of an OpenSSH client config with one `Host <name>` block per host (HostName, User, Port,
// IdentityFile, UserKnownHostsFile, StrictHostKeyChecking yes, BatchMode yes, ConnectTimeout),
// followed by the user's own ssh configuration for whatever a host leaves unset. Values are
// quoted as OpenSSH reads them; std::invalid_argument for a name that is not a host name or a
// value with a control character (read_hostfile never gives such values).
std::string ssh_config_for(const std::vector<HostSpec>& hosts);

}  // namespace bspg::hosts
