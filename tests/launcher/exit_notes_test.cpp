// exit_notes_test.cpp - which processes of a job bsprun finds lost from the notes the library
// leaves (BSPG_EXIT_NOTES): begun and not ended is lost; ended non-zero is a failure. On the grid
// path, each host's notes are listed (and removed) by a script over ssh; here it runs with sh.
#include "exit_notes.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

using bspg::launcher::ExitNotes;
using bspg::launcher::ExitNoteSet;

void note(const ExitNotes& notes, const std::string& name, int status) {
  std::ofstream(notes.path() + "/" + name) << status << "\n";
}

TEST(ExitNotes, BegunButNotEndedIsLostAndAFailedExitIsTheProgramsFailure) {
  ExitNotes notes;
  ASSERT_FALSE(notes.path().empty());
  EXPECT_EQ(notes.variable(), "BSPG_EXIT_NOTES=" + notes.path());
  EXPECT_TRUE(notes.not_ended().empty());  // not a bspg program: no notes at all
  EXPECT_FALSE(notes.ended_with_failure());
  for (int rank : {0, 1, 2}) note(notes, std::to_string(rank) + ".begun", 0);
  note(notes, "0", 0);
  note(notes, "2", 0);
  EXPECT_EQ(notes.not_ended(), std::vector<int>{1});
  EXPECT_FALSE(notes.ended_with_failure());
  note(notes, "2", 1);  // process 2 aborted (bsp_abort): the starter then killed process 1
  EXPECT_TRUE(notes.ended_with_failure());
}

TEST(ExitNotes, TheDirectoryGoesWithTheNotes) {
  std::string path;
  {
    ExitNotes notes;
    path = notes.path();
    note(notes, "0.begun", 0);
  }
  EXPECT_NE(access(path.c_str(), F_OK), 0);
}

TEST(ExitNotes, AListingFromHostsAddsUpAndOnlyAWholeOneCounts) {
  ExitNoteSet notes;
  // What a login shell prints first is skipped; a line that is not a note is ignored.
  EXPECT_TRUE(bspg::launcher::read_exit_notes(
      "Welcome\nBSPG-EXIT-NOTES-BEGIN\nnote 0.begun 0\nnote 0 0\nnote 1.begun 0\n"
      "junk 7 7\nnote ../../etc 0\nBSPG-EXIT-NOTES-END\n",
      notes));
  // Another host: its processes 2 and 3; 3 was killed.
  EXPECT_TRUE(bspg::launcher::read_exit_notes(
      "BSPG-EXIT-NOTES-BEGIN\nnote 2.begun 0\nnote 2 0\nnote 3.begun 0\nBSPG-EXIT-NOTES-END\n",
      notes));
  EXPECT_EQ(notes.not_ended(), (std::vector<int>{1, 3}));
  EXPECT_FALSE(notes.ended_with_failure());
  // Cut short (the host or its connection went): not complete.
  EXPECT_FALSE(bspg::launcher::read_exit_notes("BSPG-EXIT-NOTES-BEGIN\nnote 1 0\n", notes));
  // An unreadable status is no success.
  EXPECT_TRUE(bspg::launcher::read_exit_notes(
      "BSPG-EXIT-NOTES-BEGIN\nnote 1 x\nBSPG-EXIT-NOTES-END\n", notes));
  EXPECT_TRUE(notes.ended_with_failure());
}

// Runs a host's sh script, HOME at `home`: its output (and its errors).
std::string run_script(const std::string& home, const std::string& script) {
  const std::string command = "HOME=" + home + " sh -c '" + script + "' 2>&1";
  std::string output;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    std::size_t n = 0;
    while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
    pclose(pipe);
  }
  return output;
}

// The listing script.
std::string run_listing(const std::string& home, const std::string& marker,
                        const std::string& parent = "") {
  return run_script(home, bspg::launcher::exit_notes_script(marker, parent));
}

TEST(ExitNotes, TheHostsScriptListsTheLibrarysNotesAndRemovesThem) {
  char home_template[] = "/tmp/bspg-notes-home-XXXXXX";
  ASSERT_NE(mkdtemp(home_template), nullptr);
  const std::string home = home_template;
  const std::string marker = "bspg-12-00ab";
  EXPECT_EQ(bspg::launcher::exit_notes_directory(marker), "~/.cache/bspg/exits/" + marker);
  const std::string dir = home + "/.cache/bspg/exits/" + marker;
  ASSERT_EQ(system(("mkdir -p " + dir).c_str()), 0);
  for (const std::string name : {"4.begun", "5.begun", "4"})
    std::ofstream(dir + "/" + name) << "0\n";
  std::ofstream(dir + "/notes.txt") << "not the library's\n";
  ASSERT_EQ(symlink("/etc/hostname", (dir + "/6").c_str()), 0);  // never read through a link
  ExitNoteSet notes;
  EXPECT_TRUE(bspg::launcher::read_exit_notes(run_listing(home, marker), notes));
  EXPECT_EQ(notes.not_ended(), std::vector<int>{5});
  EXPECT_FALSE(notes.ended_with_failure());
  EXPECT_EQ(notes.ended.count(6), 0U);
  // The library's notes are gone; what else was there stays (so the directory does too).
  EXPECT_NE(access((dir + "/4.begun").c_str(), F_OK), 0);
  EXPECT_EQ(access((dir + "/notes.txt").c_str(), F_OK), 0);
  // A second listing (another host with the same home) finds nothing more, and is complete.
  ExitNoteSet again;
  EXPECT_TRUE(bspg::launcher::read_exit_notes(run_listing(home, marker), again));
  EXPECT_TRUE(again.begun.empty());
  // No directory at all (the run's processes never started there): complete and empty.
  EXPECT_TRUE(bspg::launcher::read_exit_notes(run_listing(home, "bspg-1-none"), again));
  EXPECT_EQ(system(("rm -rf " + home).c_str()), 0);
}

// bsprun's word that processes are lost on a frozen host: written whole into the run's notes
// directory where the processes made it (never through a link), read by the library as ranks,
// and removed with the notes.
TEST(ExitNotes, LostRanksAreLeftInTheNotesDirectory) {
  char home_template[] = "/tmp/bspg-notes-home-XXXXXX";
  ASSERT_NE(mkdtemp(home_template), nullptr);
  const std::string home = home_template, marker = "bspg-7-cd";
  const std::string dir = home + "/.cache/bspg/exits/" + marker;
  const auto tell = [&](const std::string& m, const std::vector<int>& ranks) {
    return run_script(home, bspg::launcher::lost_ranks_script(m, ranks));
  };
  // No directory (no process of the run started here): nothing written, not "named".
  EXPECT_EQ(tell(marker, {2}).find("named"), std::string::npos);
  EXPECT_NE(access(dir.c_str(), F_OK), 0);
  ASSERT_EQ(system(("mkdir -p " + dir).c_str()), 0);
  std::ofstream(dir + "/4.begun") << "0\n";
  EXPECT_EQ(tell(marker, {2, 5}), "named\n");
  std::ifstream written(dir + "/lost-ranks");
  int a = -1, b = -1, c = -1;
  written >> a >> b;
  EXPECT_EQ(a, 2);
  EXPECT_EQ(b, 5);
  EXPECT_FALSE(written >> c);
  // The listing after the run takes the notes and the word, and the directory goes.
  ExitNoteSet notes;
  EXPECT_TRUE(bspg::launcher::read_exit_notes(run_listing(home, marker), notes));
  EXPECT_EQ(notes.not_ended(), std::vector<int>{4});
  EXPECT_NE(access(dir.c_str(), F_OK), 0);
  // A directory that is a link is not written through.
  ASSERT_EQ(
      system(("mkdir -p " + home + "/elsewhere && ln -s " + home + "/elsewhere " + dir).c_str()),
      0);
  EXPECT_EQ(tell(marker, {1}).find("named"), std::string::npos);
  EXPECT_NE(access((home + "/elsewhere/lost-ranks").c_str(), F_OK), 0);
  EXPECT_EQ(system(("rm -rf " + home).c_str()), 0);
}

// On the Slurm path bsprun's word goes into the job's directory on the node ("~/" is the node's
// home), where that run's processes leave their notes, and nowhere else.
TEST(ExitNotes, LostRanksGoIntoTheJobsDirectoryOnTheSlurmPath) {
  char home_template[] = "/tmp/bspg-notes-home-XXXXXX";
  ASSERT_NE(mkdtemp(home_template), nullptr);
  const std::string home = home_template, marker = "bspg-8-ef";
  const std::string dir = bspg::launcher::exit_notes_directory(marker, "~/ckpt/job 2");
  EXPECT_EQ(dir, "~/ckpt/job 2/exits-" + marker);
  const std::string made = home + "/ckpt/job 2/exits-" + marker;
  const auto tell = [&](const std::vector<int>& ranks) {
    return run_script(home, bspg::launcher::lost_ranks_script(marker, ranks, "~/ckpt/job 2"));
  };
  EXPECT_EQ(tell({1}).find("named"), std::string::npos) << "no run made the directory here";
  ASSERT_EQ(system(("mkdir -p '" + made + "'").c_str()), 0);
  EXPECT_EQ(tell({3, 1}), "named\n");
  std::ifstream written(made + "/lost-ranks");
  int a = -1, b = -1;
  written >> a >> b;
  EXPECT_EQ(a, 3);
  EXPECT_EQ(b, 1);
  EXPECT_NE(access((home + "/.cache/bspg/exits/" + marker).c_str(), F_OK), 0)
      << "the grid path's directory is not the Slurm path's";
  // The listing after the run takes the word with the notes.
  ExitNoteSet notes;
  EXPECT_TRUE(
      bspg::launcher::read_exit_notes(run_listing(home, marker, home + "/ckpt/job 2"), notes));
  EXPECT_NE(access((made + "/lost-ranks").c_str(), F_OK), 0);
  EXPECT_EQ(system(("rm -rf " + home).c_str()), 0);
}

// The Slurm path's notes live in the job's directory on each node: the listing takes this run's,
// removes those an earlier run of the job left (its allocation ended before they were read),
// and the directory once nothing else is in it.
TEST(ExitNotes, InTheJobsDirectoryEarlierRunsNotesGoToo) {
  char home_template[] = "/tmp/bspg-notes-home-XXXXXX";
  ASSERT_NE(mkdtemp(home_template), nullptr);
  const std::string home = home_template, job = home + "/ckpt/job1";
  EXPECT_EQ(bspg::launcher::exit_notes_directory("bspg-2-bb", job), job + "/exits-bspg-2-bb");
  ASSERT_EQ(system(("mkdir -p " + job + "/exits-bspg-1-aa " + job + "/exits-bspg-2-bb").c_str()),
            0);
  std::ofstream(job + "/exits-bspg-1-aa/0.begun") << "0\n";  // the ended allocation's
  std::ofstream(job + "/exits-bspg-2-bb/0.begun") << "0\n";
  std::ofstream(job + "/exits-bspg-2-bb/1.begun") << "0\n";
  std::ofstream(job + "/exits-bspg-2-bb/1") << "3\n";
  ExitNoteSet notes;
  EXPECT_TRUE(bspg::launcher::read_exit_notes(run_listing(home, "bspg-2-bb", job), notes));
  EXPECT_EQ(notes.not_ended(), std::vector<int>{0});
  EXPECT_TRUE(notes.ended_with_failure());
  EXPECT_NE(access(job.c_str(), F_OK), 0) << "the emptied job directory stays";
  // A directory that holds checkpoints stays, without notes; "~/" is each node's home.
  ASSERT_EQ(system(("mkdir -p " + job + "/c4 " + job + "/exits-bspg-3-cc").c_str()), 0);
  std::ofstream(job + "/exits-bspg-3-cc/0.begun") << "0\n";
  ExitNoteSet more;
  EXPECT_TRUE(bspg::launcher::read_exit_notes(run_listing(home, "bspg-4-dd", "~/ckpt/job1"), more));
  EXPECT_TRUE(more.begun.empty());
  EXPECT_NE(access((job + "/exits-bspg-3-cc").c_str(), F_OK), 0);
  EXPECT_EQ(access((job + "/c4").c_str(), F_OK), 0);
  EXPECT_EQ(system(("rm -rf " + home).c_str()), 0);
}

}  // namespace
