// output_lines_test.cpp - whole lines from pieces of each process's output (output_lines.h).
#include "output_lines.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace bspg::launcher {
namespace {

using Clock = LineAssembler::Clock;

// What the assembler handed on, in order, as (pid, text).
struct Collected {
  std::vector<std::pair<int, std::string>> pieces;
  LineAssembler::Sink sink() {
    return [this](int pid, std::string_view text) { pieces.emplace_back(pid, std::string(text)); };
  }
  std::string of(int pid) const {
    std::string all;
    for (const auto& [p, text] : pieces)
      if (p == pid) all += text;
    return all;
  }
};

const Clock::time_point kStart{};

TEST(LineAssembler, HandsOnALineOnlyOnceItIsWhole) {
  Collected got;
  LineAssembler lines(got.sink());
  lines.add(0, "aaa", kStart);
  lines.add(1, "bbb\n", kStart);
  lines.add(0, "aaa", kStart);
  lines.add(0, "a\nrest", kStart);
  ASSERT_EQ(got.pieces.size(), 2u);
  EXPECT_EQ(got.pieces[0], std::make_pair(1, std::string("bbb\n")));
  EXPECT_EQ(got.pieces[1], std::make_pair(0, std::string("aaaaaaa\n")));
  lines.finish();  // the end: the unfinished rest, as it is
  EXPECT_EQ(got.pieces.back(), std::make_pair(0, std::string("rest")));
  EXPECT_FALSE(lines.holds_partial());
}

TEST(LineAssembler, ALongLineInSmallPiecesOfSeveralProcessesStaysWhole) {
  Collected got;
  LineAssembler lines(got.sink());
  const std::string a(20000, 'a'), b(100000, 'b');
  for (std::size_t at = 0; at < b.size(); at += 4096) {
    if (at < a.size()) lines.add(0, std::string_view(a).substr(at, 4096), kStart);
    lines.add(1, std::string_view(b).substr(at, 4096), kStart);
  }
  lines.add(0, "\n", kStart);
  lines.add(1, "\n", kStart);
  ASSERT_EQ(got.pieces.size(), 2u);
  EXPECT_EQ(got.pieces[0].second, a + "\n");
  EXPECT_EQ(got.pieces[1].second, b + "\n");
}

TEST(LineAssembler, AnUnfinishedLineGoesOutAfterWaiting) {
  Collected got;
  LineAssembler lines(got.sink(), std::chrono::seconds(1));
  lines.add(0, "prompt: ", kStart);
  lines.flush_waiting(kStart + std::chrono::milliseconds(900));
  EXPECT_TRUE(got.pieces.empty());
  // A line still arriving is not cut: waiting counts from its last byte.
  lines.add(0, "more ", kStart + std::chrono::milliseconds(900));
  lines.flush_waiting(kStart + std::chrono::milliseconds(1500));
  EXPECT_TRUE(got.pieces.empty());
  lines.flush_waiting(kStart + std::chrono::milliseconds(1900));
  ASSERT_EQ(got.pieces.size(), 1u);
  EXPECT_EQ(got.pieces[0].second, "prompt: more ");
}

TEST(LineAssembler, AnUnfinishedLineGoesOutAtItsLimit) {
  Collected got;
  LineAssembler lines(got.sink(), std::chrono::seconds(1), 10);
  lines.add(0, "0123456789abc", kStart);
  ASSERT_EQ(got.pieces.size(), 1u);
  EXPECT_EQ(got.pieces[0].second, "0123456789abc");
}

TEST(LineAssembler, AnyByteButNewlinePassesUnchanged) {
  Collected got;
  LineAssembler lines(got.sink());
  std::string line;
  for (int c = 0; c < 256; ++c)
    if (c != '\n') line += static_cast<char>(c);
  lines.add(2, std::string_view(line).substr(0, 100), kStart);
  lines.add(2, std::string_view(line).substr(100), kStart);
  lines.add(2, "\n", kStart);
  EXPECT_EQ(got.of(2), line + "\n");
}

}  // namespace
}  // namespace bspg::launcher
