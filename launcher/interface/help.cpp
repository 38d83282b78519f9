// help.cpp - bsprun --help [TOPIC] and --version (help.h). The topics are cut from the manual's
// plain text (generated from man/pages/bsprun.1.md at build time), so they never differ from it.
#include "help.h"

#include <cstring>
#include <vector>

#include "options.h"

namespace bspg::launcher {
namespace {

// A topic: the manual's paragraphs that begin with `heading` (up to the next topic's heading or
// the end of the section), or a whole section (`section`).
struct Topic {
  const char* name;
  const char* heading;  // "Grid path." at the start of an indented paragraph, or nullptr
  const char* section;  // "OPTIONS", or nullptr
};

constexpr Topic kTopics[] = {
    {"local", "Local path.", nullptr},
    {"grid", "Grid path.", nullptr},
    {"slurm", "Slurm path.", nullptr},
    {"sites", "Sites.", nullptr},
    {"probing", "Probing.", nullptr},
    {"master", "Master mode.", nullptr},
    {"output", "Output.", nullptr},
    {"stopping", "Stopping.", nullptr},
    {"checkpoints", "Checkpoints and restarts.", nullptr},
    {"start-up", "Start-up failures.", nullptr},
    {"options", nullptr, "OPTIONS"},
    {"mpi", nullptr, "MPI"},
    {"environment", nullptr, "ENVIRONMENT"},
    {"files", nullptr, "FILES"},
    {"untrusted", nullptr, "UNTRUSTED INPUT"},
    {"exit", nullptr, "EXIT STATUS"},
    {"examples", nullptr, "EXAMPLES"},
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

bool is_section_heading(const std::string& line) { return !line.empty() && line[0] != ' '; }

// The line begins a paragraph with one of the topics' headings.
bool is_topic_heading(const std::string& line) {
  for (const Topic& topic : kTopics)
    if (topic.heading != nullptr && line.rfind(std::string("    ") + topic.heading, 0) == 0)
      return true;
  return false;
}

std::string joined(const std::vector<std::string>& lines, std::size_t from, std::size_t to) {
  while (to > from && lines[to - 1].empty()) --to;  // no trailing blank lines
  std::string text;
  for (std::size_t i = from; i < to; ++i) text += lines[i] + "\n";
  return text;
}

}  // namespace

std::string short_help_text() {
  std::string text =
      "Usage: bsprun -p N [OPTIONS] PROGRAM [ARGS...]  N processes at once\n"
      "       bsprun [OPTIONS] PROGRAM [ARGS...]       master mode: bsp_begin spawns\n"
      "       bsprun --rsl FILE [OPTIONS]              an allocation written before\n"
      "Runs a BSPlib program on this machine, on the least loaded hosts of a host file,\n"
      "or on the nodes of the Slurm allocation it runs in.\n"
      "\n"
      "  -p N, -np N           processes to start at once\n"
      "  --hostfile FILE       candidate hosts (the grid path; default $BSPG_HOSTFILE)\n"
      "  -x NAME[=VALUE]       export a variable to every process\n"
      "  --tag-output          start each line of output with \"[PID] \"\n"
      "  --time-limit SECONDS  stop the job after this long (exit status 124)\n"
      "  --profile DIR         profile the job superstep by superstep (bspprof(1))\n"
      "  --restarts N          restart from the newest checkpoint after a loss\n"
      "  --resume --job-id ID  continue a stopped job from its newest checkpoint\n"
      "  --show                print the starter's command line, start nothing\n"
      "  --dry-run             probe and place, print the allocation, start nothing\n"
      "  -v, --verbose         print the starter's command line\n"
      "  -V, --version         bspg's version and the MPI's\n"
      "\n"
      "bsprun --help TOPIC prints that part of the manual, bsprun(1). TOPIC is one of:\n";
  // The topics, wrapped within 80 columns.
  std::string line = " ";
  for (const Topic& topic : kTopics) {
    const std::string word = std::string(" ") + topic.name + ",";
    if (line.size() + word.size() > 78) {
      text += line + "\n";
      line = " ";
    }
    line += word;
  }
  const std::string last = " or all (the whole manual).";
  text += line.size() + last.size() > 78 ? line + "\n " + last + "\n" : line + last + "\n";
  return text;
}

std::string help_topics() {
  std::string names;
  for (const Topic& topic : kTopics) names += (names.empty() ? "" : ", ") + std::string(topic.name);
  return names;
}

std::optional<std::string> help_topic_text(const std::string& name) {
  if (name == "all") return help_text();
  const Topic* topic = nullptr;
  for (const Topic& t : kTopics)
    if (name == t.name) topic = &t;
  if (topic == nullptr) return std::nullopt;
  const std::vector<std::string> lines = lines_of(help_text());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (topic->section != nullptr) {
      if (lines[i] != topic->section) continue;
      std::size_t end = i + 1;
      while (end < lines.size() && !is_section_heading(lines[end])) ++end;
      return joined(lines, i, end);
    }
    if (lines[i].rfind(std::string("    ") + topic->heading, 0) != 0) continue;
    std::size_t end = i + 1;
    while (end < lines.size() && !is_section_heading(lines[end]) && !is_topic_heading(lines[end]))
      ++end;
    return joined(lines, i, end);
  }
  return std::nullopt;  // the manual lost the part: a test keeps every topic found
}

std::string version_text(const std::string& mpi_name, const std::string& starter) {
  return std::string("bsprun (bspg) ") + BSPG_VERSION + "\nMPI: " + mpi_name + ", started with " +
         starter + "\n";
}

}  // namespace bspg::launcher
