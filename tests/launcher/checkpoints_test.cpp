// checkpoints_test.cpp - what bsprun reads from a host's checkpoint directory and how it picks the
// checkpoint to restart from: the survey script run here with sh on real shard files (made with the
// library's format code), hostile listings, whole and partial checkpoints, and the copies a
// restart needs.
#include "checkpoints.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "shard.hpp"
#include "untrusted.h"

using namespace bspg::launcher;

namespace {

// A scratch directory, removed with everything in it.
class Scratch {
 public:
  Scratch() {
    char pattern[] = "/tmp/bspg-ckpt-unit.XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~Scratch() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

constexpr const char* kRun = "65a1b2c3d4e5f607";    // a run id
constexpr const char* kOlder = "65a1b2c300000001";  // an earlier run's
constexpr const char* kProgram = "0123456789abcdef";

// Writes a whole shard of `pid` for checkpoint n of `run` (no areas, no messages) at `path`.
void write_shard(const std::string& path, int pid, std::uint64_t n, int nprocs,
                 const std::string& run = kRun) {
  bspg::ShardHeader header{};
  std::memcpy(header.run, run.data(), sizeof header.run);
  std::memcpy(header.magic, bspg::kShardMagic, sizeof header.magic);
  header.version = bspg::kShardVersion;
  header.pid = static_cast<std::uint32_t>(pid);
  header.nprocs = static_cast<std::uint32_t>(nprocs);
  header.checkpoint = n;
  header.file_bytes = sizeof header + 8;
  bspg::ShardHash hash;
  hash.update(&header, sizeof header);
  const std::uint64_t sum = hash.value();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&header), sizeof header);
  out.write(reinterpret_cast<const char*>(&sum), sizeof sum);
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Runs a script with sh here; its stdout.
std::string run_sh(const std::string& script) {
  setenv("BSPG_TEST_SCRIPT", script.c_str(), 1);  // passed whole, whatever quotes it holds
  FILE* pipe = popen("sh -c \"$BSPG_TEST_SCRIPT\"", "r");
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  pclose(pipe);
  return out;
}

Holdings holdings(const std::string& host, const std::string& listing) {
  Holdings h;
  h.host = host;
  EXPECT_EQ(read_survey(listing, h), "") << listing;
  return h;
}

}  // namespace

TEST(Checkpoints, JobIdsAndDirectories) {
  EXPECT_EQ(bspg::untrusted::job_id_problem(new_job_id()), "");
  EXPECT_NE(new_job_id(), new_job_id());
  EXPECT_EQ(bspg::untrusted::job_id_problem("nightly-run_2.a"), "");
  EXPECT_NE(bspg::untrusted::job_id_problem(""), "");
  EXPECT_NE(bspg::untrusted::job_id_problem("-x"), "");
  EXPECT_NE(bspg::untrusted::job_id_problem(".hidden"), "");
  EXPECT_NE(bspg::untrusted::job_id_problem("a/b"), "");
  EXPECT_NE(bspg::untrusted::job_id_problem("a b"), "");
  EXPECT_NE(bspg::untrusted::job_id_problem(std::string(65, 'a')), "");
  EXPECT_EQ(default_checkpoint_dir("j1"), "~/.cache/bspg/checkpoints/j1");
  EXPECT_EQ(bspg::untrusted::checkpoint_dir_problem("~/.cache/bspg/checkpoints/j1"), "");
  EXPECT_EQ(bspg::untrusted::checkpoint_dir_problem("/scratch/my job/ckpt"), "");
  EXPECT_EQ(bspg::untrusted::checkpoint_dir_problem("relative/dir"), "it must be an absolute path");
  EXPECT_EQ(bspg::untrusted::checkpoint_dir_problem("/a/../etc"),
            "it must not have a '.' or '..' component");
  EXPECT_EQ(bspg::untrusted::checkpoint_dir_problem("/a/./b"),
            "it must not have a '.' or '..' component");
  EXPECT_NE(bspg::untrusted::checkpoint_dir_problem("/"), "");
  EXPECT_NE(bspg::untrusted::checkpoint_dir_problem("~/"), "");
  EXPECT_NE(bspg::untrusted::checkpoint_dir_problem("/tmp/a\nProxyCommand x"), "");
  EXPECT_NE(bspg::untrusted::checkpoint_dir_problem("/" + std::string(1100, 'a')), "");
  EXPECT_EQ(sftp_path("~/.cache/x"), ".cache/x");
  EXPECT_EQ(sftp_path("/abs/x"), "/abs/x");
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(local_path("~/.cache/x"), "/home/someone/.cache/x");
  EXPECT_EQ(local_path("/abs/x"), "/abs/x");
}

// The survey script as a host runs it, on files of every kind, with a name that tries to add a
// line.
TEST(Checkpoints, SurveyReportsMarkersAndCheckedShards) {
  Scratch dir;
  const std::string job = dir.path() + "/job dir";  // a space: the script quotes
  mkdir(job.c_str(), 0700);
  mkdir((job + "/c3").c_str(), 0700);
  mkdir((job + "/c4").c_str(), 0700);
  mkdir((job + "/c4x").c_str(), 0700);
  write_shard(job + "/c3/shard-0", 0, 3, 2);
  write_shard(job + "/c4/shard-0", 0, 4, 2);
  write_shard(job + "/c4/copy-1", 1, 4, 2);
  write_shard(job + "/c4/shard-1", 0, 4, 2);  // whole, but process 0's
  write_text(job + "/c4/copy-0", "damaged");
  write_text(job + "/c4/shard-1.part", "half written");
  write_text(job + "/c4/shard-2\nfile 4 shard 9 0 ok 9 4", "a name with a newline");
  write_text(job + "/c4/complete-0", "bspg checkpoint 4 of 2 processes run " + std::string(kRun) +
                                         " program " + kProgram + "\n");
  write_text(job + "/c4/complete-1", "");  // a full disk's empty marker: named, skipped
  // Planted symlinks: never followed (a c<N> that points elsewhere, a shard that does).
  mkdir((dir.path() + "/elsewhere").c_str(), 0700);
  write_shard(dir.path() + "/elsewhere/shard-0", 0, 7, 2);
  write_text(dir.path() + "/elsewhere/complete-0",
             "bspg checkpoint 7 of 2 processes run " + std::string(kRun) + " program " + kProgram);
  ASSERT_EQ(symlink((dir.path() + "/elsewhere").c_str(), (job + "/c7").c_str()), 0);
  ASSERT_EQ(symlink((dir.path() + "/elsewhere/shard-0").c_str(), (job + "/c3/copy-0").c_str()), 0);
  write_text(job + "/c4x/shard-0", "not a checkpoint directory");
  write_text(job + "/stop", "");
  const char* hostinfo = std::getenv("BSPG_TEST_HOSTINFO");
  ASSERT_NE(hostinfo, nullptr) << "set BSPG_TEST_HOSTINFO to bspg-hostinfo";

  const std::string listing = run_sh(survey_script(job, hostinfo, true));
  Holdings h;
  ASSERT_EQ(read_survey(listing, h), "") << listing;
  EXPECT_EQ(access((job + "/stop").c_str(), F_OK), -1) << "the stop file was not removed";
  ASSERT_EQ(h.complete.size(), 1u) << listing;
  EXPECT_EQ(h.complete.at({kRun, 4}).nprocs, 2);
  EXPECT_EQ(h.complete.at({kRun, 4}).program, kProgram);
  ASSERT_EQ(h.skipped.size(), 1u) << listing;
  EXPECT_NE(h.skipped[0].find("'complete 4 1 ' (an empty or damaged complete marker)"),
            std::string::npos)
      << h.skipped[0];
  std::map<std::string, const HeldFile*> by_name;
  for (const HeldFile& f : h.files) by_name[f.name()] = &f;
  ASSERT_EQ(by_name.size(), 5u) << listing;
  EXPECT_TRUE(by_name.at("c3/shard-0")->whole);
  EXPECT_TRUE(by_name.at("c4/shard-0")->whole && by_name.at("c4/shard-0")->checked);
  EXPECT_EQ(by_name.at("c4/shard-0")->run, kRun);
  EXPECT_TRUE(by_name.at("c4/copy-1")->whole);
  EXPECT_FALSE(by_name.at("c4/shard-1")->whole);
  EXPECT_NE(by_name.at("c4/shard-1")->problem.find("another process"), std::string::npos);
  EXPECT_FALSE(by_name.at("c4/copy-0")->whole);
  EXPECT_EQ(by_name.at("c4/copy-0")->problem, "shorter than its header");

  // Without bspg-hostinfo the files are listed as not checked (and taken as whole).
  Holdings unchecked;
  ASSERT_EQ(read_survey(
                run_sh("PATH=/usr/bin:/bin; " + survey_script(job, "/nonexistent/hostinfo", false)),
                unchecked),
            "");
  ASSERT_EQ(unchecked.files.size(), 5u);
  for (const HeldFile& f : unchecked.files) EXPECT_TRUE(!f.checked && f.whole) << f.name();

  // A directory that does not exist holds nothing.
  Holdings none;
  EXPECT_EQ(read_survey(run_sh(survey_script(dir.path() + "/none", hostinfo, false)), none), "");
  EXPECT_TRUE(none.files.empty() && none.complete.empty());
}

TEST(Checkpoints, HostileListingsAreRefused) {
  const std::string begin = "motd line\nbspg-survey-v1\n", end = "bspg-survey-end\n";
  const std::string good = "file 4 shard 0 0 ok 0 4 " + std::string(kRun) + "\n";
  Holdings h;
  EXPECT_EQ(read_survey(begin + good + end, h), "");
  ASSERT_EQ(h.files.size(), 1u);
  EXPECT_TRUE(h.files[0].whole);
  // Each bad line is named and skipped; the good line beside it still counts.
  const std::string marker_end = " run " + std::string(kRun) + " program " + kProgram;
  for (const std::string& line : std::vector<std::string>{
           "file 4 shard -1 0 ok", "file 4 other 0 0 ok", "file x shard 0 0 ok",
           "file 0 shard 0 0 ok", "complete 4 0 bspg checkpoint 5 of 2 processes" + marker_end,
           "complete 4 0 bspg checkpoint 4 of 0 processes" + marker_end,
           "complete 4 0 bspg checkpoint 4 of 2 processes",  // an older bspg's: no run
           "complete 4 0 bspg checkpoint 4 of 2 processes run x program y",
           "complete 4 0 something else", "complete 4 0 ", "rm -rf /",
           "file 99999999999999999999 shard 0 0 ok"}) {
    Holdings bad;
    EXPECT_EQ(read_survey(begin + line + "\n" + good + end, bad), "") << line;
    EXPECT_EQ(bad.skipped.size(), 1u) << line;
    EXPECT_TRUE(bad.complete.empty()) << line;
    EXPECT_EQ(bad.files.size(), 1u) << line;
  }
  // A shard whose check names no run, or a malformed one, is not whole.
  for (const char* verdict : {"ok 0 4", "ok 0 4 xyz", "ok 0 4 65A1B2C3D4E5F607"}) {
    Holdings odd;
    EXPECT_EQ(read_survey(begin + "file 4 shard 0 0 " + verdict + "\n" + end, odd), "");
    ASSERT_EQ(odd.files.size(), 1u);
    EXPECT_FALSE(odd.files[0].whole) << verdict;
  }
  Holdings cut;
  EXPECT_EQ(read_survey(begin + good, cut),
            "the listing of the checkpoint directory was cut short");
  EXPECT_EQ(read_survey("Permission denied\n", cut), "no listing of the checkpoint directory");
}

TEST(Checkpoints, NewestWholeCheckpointAndTheCopiesItNeeds) {
  const std::string begin = "bspg-survey-v1\n", end = "bspg-survey-end\n";
  // emu1 ran pids 0, 1 and keeps the copy of 3; emu3 ran 3 and keeps the copies of 0 and 2. emu2
  // (pid 2, copies of 1) is lost. Checkpoint 5 was being written: no marker.
  std::vector<Holdings> hosts = {
      holdings("emu1", begin +
                           "complete 4 0 bspg checkpoint 4 of 4 processes run 65a1b2c3d4e5f607 "
                           "program 0123456789abcdef\n"
                           "file 4 shard 0 0 ok 0 4 65a1b2c3d4e5f607\nfile 4 shard 1 0 ok 1 4 "
                           "65a1b2c3d4e5f607\nfile 4 copy 3 0 ok 3 4 65a1b2c3d4e5f607\n"
                           "file 5 shard 0 0 ok 0 5 65a1b2c3d4e5f607\n" +
                           end),
      holdings("emu3", begin +
                           "complete 4 3 bspg checkpoint 4 of 4 processes run 65a1b2c3d4e5f607 "
                           "program 0123456789abcdef\n"
                           "file 4 shard 3 0 ok 3 4 65a1b2c3d4e5f607\nfile 4 copy 0 1 damaged "
                           "(checksum mismatch)\n"
                           "file 4 copy 2 - \n" +
                           end),
  };
  CheckpointChoice choice = choose_checkpoint(hosts, 4);
  ASSERT_EQ(choice.checkpoint, 4u) << choice.why_none;
  EXPECT_EQ(choice.nprocs, 4);
  // The new job: pids 0, 1 on emu1, 2, 3 on emu4 (a spare).
  std::vector<Transfer> transfers = plan_transfers(choice, {"emu1", "emu1", "emu4", "emu4"});
  ASSERT_EQ(transfers.size(), 2u);
  EXPECT_EQ(transfers[0].pid, 2);
  EXPECT_EQ(transfers[0].from_host + ":" + transfers[0].from_name, "emu3:c4/copy-2");
  EXPECT_EQ(transfers[0].to_host + ":" + transfers[0].to_name, "emu4:c4/shard-2");
  EXPECT_EQ(transfers[1].pid, 3);
  EXPECT_EQ(transfers[1].from_host + ":" + transfers[1].from_name, "emu1:c4/copy-3");
  EXPECT_EQ(transfers[1].to_name, "c4/shard-3");

  // Processes whose host holds their shard need nothing.
  EXPECT_TRUE(plan_transfers(choice, {"emu1", "emu1", "emu3", "emu3"}).empty());

  // Without emu3 nothing is whole: process 2's only copy was there (emu1 holds a copy of 3).
  CheckpointChoice partial = choose_checkpoint({hosts[0]}, 4);
  EXPECT_EQ(partial.checkpoint, 0u);
  EXPECT_TRUE(partial.any_marked);
  EXPECT_EQ(partial.why_none,
            "checkpoint 4 lacks a whole shard of process 2 on the reachable hosts");

  // Another process count is said.
  CheckpointChoice other = choose_checkpoint(hosts, 3);
  EXPECT_EQ(other.checkpoint, 0u);
  EXPECT_EQ(other.other_nprocs, "checkpoint 4 of 4 processes");
  EXPECT_FALSE(other.any_marked);

  // No marker anywhere: the job never checkpointed.
  CheckpointChoice never = choose_checkpoint(
      {holdings("emu1", begin + "file 5 shard 0 0 ok 0 5 65a1b2c3d4e5f607\n" + end)}, 1);
  EXPECT_EQ(never.checkpoint, 0u);
  EXPECT_FALSE(never.any_marked);
}

TEST(Checkpoints, DamagedFilesAreNamedWhenNothingIsWhole) {
  const std::string begin = "bspg-survey-v1\n", end = "bspg-survey-end\n";
  CheckpointChoice choice = choose_checkpoint(
      {holdings("emu1", begin +
                            "complete 2 0 bspg checkpoint 2 of 2 processes run 65a1b2c3d4e5f607 "
                            "program 0123456789abcdef\nfile 2 shard 0 0 ok 0 2 65a1b2c3d4e5f607\n"
                            "file 2 copy 1 1 damaged (checksum mismatch)\n" +
                            end)},
      2);
  EXPECT_EQ(choice.checkpoint, 0u);
  EXPECT_EQ(choice.why_none,
            "checkpoint 2 lacks a whole shard of process 1 on the reachable hosts; emu1:c2/copy-1 "
            "is damaged "
            "(checksum mismatch)");
}

// A file named as process 1's shard of checkpoint 5 that holds process 0's: named in one readable
// clause.
TEST(Checkpoints, MisplacedShardIsNamedPlainly) {
  const std::string begin = "bspg-survey-v1\n", end = "bspg-survey-end\n";
  const CheckpointChoice choice = choose_checkpoint(
      {holdings("emu1", begin +
                            "complete 5 0 bspg checkpoint 5 of 2 processes run 65a1b2c3d4e5f607 "
                            "program 0123456789abcdef\nfile 5 shard 0 0 ok 0 5 65a1b2c3d4e5f607\n"
                            "file 5 shard 1 0 ok 0 5 65a1b2c3d4e5f607\n" +
                            end)},
      2);
  EXPECT_EQ(choice.checkpoint, 0u);
  EXPECT_EQ(choice.why_none,
            "checkpoint 5 lacks a whole shard of process 1 on the reachable hosts; emu1:c5/shard-1 "
            "is another process's or checkpoint's shard (ok 0 5 65a1b2c3d4e5f607)");
}

// A directory that holds an earlier run's checkpoint 8 and this run's checkpoint 2: a restart of
// this run never goes back to the earlier run's; --resume takes the newest run's newest whole one.
TEST(Checkpoints, ARunRestartsFromItsOwnCheckpointsOnly) {
  const std::string begin = "bspg-survey-v1\n", end = "bspg-survey-end\n";
  const std::string tail = " program 0123456789abcdef\n";
  const std::vector<Holdings> hosts = {
      holdings("emu1", begin + "complete 8 0 bspg checkpoint 8 of 1 processes run " + kOlder +
                           tail + "file 8 shard 0 0 ok 0 8 " + kOlder + "\n" +
                           "complete 2 0 bspg checkpoint 2 of 1 processes run " + kRun + tail +
                           "file 2 shard 0 0 ok 0 2 " + kRun + "\n" + end)};
  EXPECT_EQ(choose_checkpoint(hosts, 1, kRun).checkpoint, 2u);
  EXPECT_EQ(choose_checkpoint(hosts, 1, kOlder).checkpoint, 8u);
  const CheckpointChoice any = choose_checkpoint(hosts, 1);
  EXPECT_EQ(any.checkpoint, 2u);
  EXPECT_EQ(any.run, kRun);
  EXPECT_EQ(any.program, kProgram);
  // A run that wrote no checkpoint yet has none, whatever the directory holds.
  const CheckpointChoice fresh = choose_checkpoint(hosts, 1, "65a1b2c3ffffffff");
  EXPECT_EQ(fresh.checkpoint, 0u);
  EXPECT_FALSE(fresh.any_marked);

  // The earlier run's shard beside this run's marker does not make this run's checkpoint whole.
  const std::vector<Holdings> mixed = {
      holdings("emu1", begin + "complete 3 0 bspg checkpoint 3 of 2 processes run " + kRun + tail +
                           "file 3 shard 0 0 ok 0 3 " + kRun + "\n" + "file 3 shard 1 0 ok 1 3 " +
                           kOlder + "\n" + end)};
  const CheckpointChoice none = choose_checkpoint(mixed, 2, kRun);
  EXPECT_EQ(none.checkpoint, 0u);
  EXPECT_EQ(none.why_none,
            "checkpoint 3 lacks a whole shard of process 1 on the reachable hosts; "
            "emu1:c3/shard-1 is of another run");
}

TEST(Checkpoints, RunAndProgramIds) {
  EXPECT_EQ(run_id_problem(new_run_id()), "");
  EXPECT_NE(new_run_id(), new_run_id());
  EXPECT_NE(run_id_problem("65A1B2C3D4E5F607"), "");
  EXPECT_NE(run_id_problem("65a1b2c3d4e5f60"), "");
  EXPECT_EQ(program_id("/a/b/prog", {"1", "2"}), program_id("./prog", {"1", "2"}));
  EXPECT_NE(program_id("prog", {"1", "2"}), program_id("prog", {"12"}));
  EXPECT_NE(program_id("prog", {"1", "2"}), program_id("prog", {"1", "3"}));
  EXPECT_EQ(run_id_problem(program_id("prog", {})), "");
}

// The stop file names its run, and a symlink planted in its place is replaced, not written
// through.
TEST(Checkpoints, StopFileNamesTheRunAndFollowsNoSymlink) {
  Scratch dir;
  const std::string job = dir.path() + "/job", victim = dir.path() + "/victim";
  mkdir(job.c_str(), 0700);
  write_text(victim, "precious\n");
  ASSERT_EQ(symlink(victim.c_str(), (job + "/stop").c_str()), 0);
  EXPECT_EQ(run_sh(stop_file_script(job, kRun)), "stop file written\n");
  std::ifstream stop(job + "/stop"), kept(victim);
  std::string line;
  std::getline(stop, line);
  EXPECT_EQ(line, kRun);
  std::getline(kept, line);
  EXPECT_EQ(line, "precious");
  struct stat st {};
  ASSERT_EQ(lstat((job + "/stop").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
}
