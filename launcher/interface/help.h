// help.h - what bsprun --help and --version print: a one-screen summary, the manual's parts by
// topic (bsprun --help TOPIC), the whole manual (--help all), and the versions.
#pragma once

#include <optional>
#include <string>

namespace bspg::launcher {

// Usage, the common options and the topics: at most 24 lines of at most 80 characters.
std::string short_help_text();

// The part of bsprun(1) that TOPIC names (its paragraphs or section, as in the manual), the
// whole manual for "all"; nothing for a name that is no topic.
std::optional<std::string> help_topic_text(const std::string& topic);

// The topics' names, comma-separated, for messages.
std::string help_topics();

// bspg's version and the MPI bsprun starts jobs with (and its starter).
std::string version_text(const std::string& mpi_name, const std::string& starter);

}  // namespace bspg::launcher
