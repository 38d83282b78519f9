// pointers - global variables that hold pointers, set by main's sequential part on process 0
// only (after bsp_init, as MulticoreBSP programs do), then used by every process: a string
// pointer to a literal, a FILE* that is stdout, a struct with an array and doubles, a short
// std::string (its characters live inside the object, behind a pointer to itself), a static
// object whose member points into itself, and function pointers into the program and into libc.
//
// Usage: pointers
// Every process checks every value and prints "pid s: <greeting> <label> ..." through the shared
// FILE*; process 0 prints "PASS pointers" after bsp_end.
#include <cstdio>
#include <cstring>
#include <string>

#include "check.h"

namespace {

struct Settings {
  int steps;
  double weights[4];
  double tolerance;
  const char* unit;
};

// Counts values into bins; `last_` points at the bin it filled last.
class Tally {
 public:
  Tally() : count_(0), last_(&bins_[0]) { std::memset(bins_, 0, sizeof bins_); }
  void add(int value) {
    last_ = &bins_[value % 8];
    ++*last_;
    ++count_;
  }
  int count() const { return count_; }
  int last_bin() const { return static_cast<int>(last_ - bins_); }
  int bin(int k) const { return bins_[k]; }

 private:
  int count_;
  int bins_[8];
  int* last_;
};

const char* greeting = "unset";
FILE* out = nullptr;
Settings settings;
std::string label = "none";
Tally tally;
int (*compare)(const char*, const char*) = nullptr;
int (*scale)(int) = nullptr;

int triple(int x) { return 3 * x; }

void spmd() {
  bsp_begin(bsp_nprocs());
  const int s = bsp_pid();
  CHECK("pointers", out == stdout, "out is %p, stdout is %p", static_cast<void*>(out),
        static_cast<void*>(stdout));
  CHECK("pointers", std::strcmp(greeting, "hello from the sequential part") == 0, "greeting '%s'",
        greeting);
  CHECK("pointers",
        settings.steps == 40 && settings.weights[3] == 0.125 && settings.tolerance == 1e-9 &&
            std::strcmp(settings.unit, "m/s") == 0,
        "settings %d %g %g", settings.steps, settings.weights[3], settings.tolerance);
  CHECK("pointers", label == "grid-7" && label.size() == 6, "label '%s'", label.c_str());
  label += "+";  // the string must be usable, not only readable
  CHECK("pointers", tally.count() == 3 && tally.last_bin() == 5 && tally.bin(3) == 2,
        "tally: %d values, last bin %d", tally.count(), tally.last_bin());
  tally.add(13);
  CHECK("pointers", tally.bin(5) == 2, "tally bin 5 = %d after adding", tally.bin(5));
  CHECK("pointers", compare != nullptr && compare("a", "b") < 0, "compare %p",
        reinterpret_cast<void*>(compare));
  CHECK("pointers", scale != nullptr && scale(7) == 21, "scale %p", reinterpret_cast<void*>(scale));
  std::fprintf(out, "pid %d: %s, %s, %d steps of %s, tally %d\n", s, greeting, label.c_str(),
               settings.steps, settings.unit, tally.count());
  std::fflush(out);
  bsp_end();
}

}  // namespace

int main(int argc, char** argv) {
  bsp_init(spmd, argc, argv);
  // The sequential part: only process 0 comes here.
  greeting = "hello from the sequential part";
  out = stdout;
  settings = Settings{40, {1.0, 0.5, 0.25, 0.125}, 1e-9, "m/s"};
  label = "grid-7";
  tally.add(3);
  tally.add(11);
  tally.add(5);
  compare = std::strcmp;
  scale = triple;
  spmd();
  std::printf("PASS pointers\n");
  return 0;
}
