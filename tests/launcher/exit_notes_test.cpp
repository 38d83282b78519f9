// exit_notes_test.cpp - which processes of a local job bsprun finds lost from the notes the
// library leaves (BSPG_EXIT_NOTES): begun and not ended is lost; ended non-zero is a failure.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "exit_notes.h"

namespace {

using bspg::launcher::ExitNotes;

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

}  // namespace
