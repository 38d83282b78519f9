// replay_main.cpp - runs a fuzz target's LLVMFuzzerTestOneInput over files, for the normal (gcc)
// build, where libFuzzer's own main is not there: ctest replays each target's seed corpus and
// the inputs that once crashed it (tests/fuzz/findings), so a finding stays a test.
//
//   replay_main [--allow-missing] PATH...
// Each PATH is a file or a directory (its regular files, recursively, in name order). A PATH
// that does not exist is an error unless --allow-missing comes before it (a target without
// findings has no findings directory). A target that crashes or aborts ends the process, so the
// test fails; the last "replaying" line names the input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

bool read_whole(const fs::path& path, std::vector<std::uint8_t>& bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  bool allow_missing = false;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--allow-missing") {
      allow_missing = true;
      continue;
    }
    std::error_code error;
    const fs::path path(arg);
    if (fs::is_directory(path, error)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::recursive_directory_iterator(path, error))
        if (entry.is_regular_file()) found.push_back(entry.path());
      if (error) {
        std::fprintf(stderr, "replay: cannot list %s: %s\n", arg.c_str(), error.message().c_str());
        return 2;
      }
      std::sort(found.begin(), found.end());
      inputs.insert(inputs.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(path, error)) {
      inputs.push_back(path);
    } else if (!allow_missing || fs::exists(path, error)) {
      std::fprintf(stderr, "replay: %s is neither a file nor a directory\n", arg.c_str());
      return 2;
    }
  }
  for (const fs::path& input : inputs) {
    std::vector<std::uint8_t> bytes;
    if (!read_whole(input, bytes)) {
      std::fprintf(stderr, "replay: cannot read %s\n", input.c_str());
      return 2;
    }
    std::fprintf(stderr, "replaying %s (%zu bytes)\n", input.c_str(), bytes.size());
    // A target may keep the pointer's bytes only for the call; an empty input still gets a
    // pointer that is not null, as libFuzzer gives.
    static const std::uint8_t kNothing = 0;
    LLVMFuzzerTestOneInput(bytes.empty() ? &kNothing : bytes.data(), bytes.size());
  }
  std::printf("replayed %zu inputs\n", inputs.size());
  return 0;
}
