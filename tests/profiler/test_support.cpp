// test_support.cpp - see test_support.h.
#include "test_support.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "bspprof.h"

extern char** environ;

namespace bspprof_test {

ScratchDir::ScratchDir() {
  std::string pattern = std::filesystem::temp_directory_path().string() + "/bspprof-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
  std::filesystem::create_directory(raw());
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string raw_name(int attempt, int section, int pid) {
  return "a" + std::to_string(attempt) + ".s" + std::to_string(section) + ".p" +
         std::to_string(pid) + ".bspprof";
}

std::string host_name(int pid) { return "node" + std::to_string(pid); }

RawWriter::RawWriter(const std::string& profile_dir, int attempt, int section, int pid, int nprocs,
                     double begin_s, const std::string& host,
                     const std::function<void(FileHeader&)>& edit)
    : path_(profile_dir + "/raw/" + raw_name(attempt, section, pid)), nprocs_(nprocs) {
  file_ = std::fopen(path_.c_str(), "wb");
  if (file_ == nullptr) throw std::runtime_error("cannot write " + path_);
  FileHeader header{};
  std::memcpy(header.magic, bspg::profile::kMagic, sizeof header.magic);
  header.version = bspg::profile::kVersion;
  header.pid = pid;
  header.nprocs = nprocs;
  header.attempt = attempt;
  header.section = section;
  header.begin_s = begin_s;
  const std::string name = host.empty() ? host_name(pid) : host;
  std::strncpy(header.host, name.c_str(), sizeof header.host - 1);
  if (edit) edit(header);
  bytes(&header, sizeof header);
}

RawWriter::~RawWriter() { close(); }

void RawWriter::close() {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
}

void RawWriter::bytes(const void* data, std::size_t size) {
  if (std::fwrite(data, 1, size, file_) != size) throw std::runtime_error("write failed");
}

void RawWriter::sync(SyncKind kind, std::int32_t group, std::int32_t group_first,
                     std::uint64_t superstep, std::uint32_t group_step, double call_s,
                     double return_s, std::uint32_t group_size,
                     const std::vector<PeerCount>& peers) {
  SyncRecord record{};
  record.kind = static_cast<std::uint32_t>(kind);
  record.group = group;
  record.superstep = superstep;
  record.group_step = group_step;
  record.group_first = group_first;
  record.call_s = call_s;
  record.return_s = return_s;
  record.group_size = group_size;
  record.n_peers = static_cast<std::uint32_t>(peers.size());
  bytes(&record, sizeof record);
  if (!peers.empty()) bytes(peers.data(), peers.size() * sizeof(PeerCount));
}

void RawWriter::world(std::uint64_t superstep, double call_s, double return_s,
                      const std::vector<PeerCount>& peers, SyncKind kind) {
  sync(kind, -1, -1, superstep, 0, call_s, return_s, static_cast<std::uint32_t>(nprocs_), peers);
}

PeerCount put(int peer, std::uint64_t bytes, std::uint32_t messages) {
  PeerCount c{};
  c.peer = peer;
  c.put_messages = messages;
  c.put_bytes = bytes;
  return c;
}

PeerCount get(int peer, std::uint64_t bytes, std::uint32_t messages) {
  PeerCount c{};
  c.peer = peer;
  c.get_messages = messages;
  c.get_bytes = bytes;
  return c;
}

PeerCount send(int peer, std::uint64_t bytes, std::uint32_t messages) {
  PeerCount c{};
  c.peer = peer;
  c.send_messages = messages;
  c.send_bytes = bytes;
  return c;
}

namespace {

// Splits one CSV line; quoted fields may hold commas and doubled quotes.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

}  // namespace

Csv read_csv(const std::string& path) {
  Csv csv;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::string line;
  std::getline(in, line);
  csv.columns = csv_fields(line);
  while (std::getline(in, line)) {
    const std::vector<std::string> fields = csv_fields(line);
    if (fields.size() != csv.columns.size())
      throw std::runtime_error("a row of " + std::to_string(fields.size()) + " fields: " + line);
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < fields.size(); ++i) row[csv.columns[i]] = fields[i];
    csv.rows.push_back(std::move(row));
  }
  return csv;
}

std::string Csv::text(std::size_t row, const std::string& column) const {
  if (row >= rows.size()) throw std::runtime_error("no row " + std::to_string(row));
  const auto it = rows[row].find(column);
  if (it == rows[row].end()) throw std::runtime_error("no column " + column);
  return it->second;
}

double Csv::number(std::size_t row, const std::string& column) const {
  return std::stod(text(row, column));
}

MergeResult merge(const std::string& dir, bool plot, const std::string& params,
                  std::uint64_t trace_steps) {
  bspg::profile::MergeOptions options;
  options.dir = dir;
  options.params_file = params;
  options.plot = plot;
  options.trace_steps = trace_steps;
  std::ostringstream summary, errors;
  MergeResult result;
  result.status = bspg::profile::merge_profile(options, summary, errors);
  result.summary = summary.str();
  result.errors = errors.str();
  return result;
}

ToolResult run_tool(const std::vector<std::string>& args) {
  std::vector<std::string> words = {BSPPROF_TOOL};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  pid_t child = 0;
  const int error = posix_spawn(&child, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (error != 0) throw std::runtime_error("cannot start bspprof");
  ToolResult result;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof buffer)) > 0)
    result.output.append(buffer, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

bool gnuplot_available() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && access((dir + "/gnuplot").c_str(), X_OK) == 0) return true;
  return false;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool file_exists(const std::string& path) { return std::filesystem::exists(path); }

std::string sample_params() { return BSPPROF_TEST_DATA "/bspbench.dat"; }

}  // namespace bspprof_test
