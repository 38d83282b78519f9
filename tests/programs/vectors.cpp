// vectors - a C++ BSPlib program: std::vector buffers registered with bsp_push_reg through a
// small RAII wrapper (push in the constructor, pop in the destructor, re-registration when the
// vector reallocates), messages carrying std::pair payloads, and an empty vector (whose data()
// may be nullptr) registered with size 0.
//
// Work: every process generates values (a different count per process, none on process 1 when
// p >= 3) and builds a global histogram: bins are owned cyclically; each process adds its
// local counts into the owners' vectors with bsp_put (one slot per sender, summed by the
// owner), then everyone gathers the whole histogram with bsp_get. The heaviest values are
// exchanged as (value, weight) messages. Each process checks everything against a sequential
// computation over all processes' regenerated inputs.
#include <bsp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::cout << "FAIL: vectors: process " << bsp_pid() << ": " << what << std::endl;
  bsp_abort("vectors: a check failed on process %d\n", bsp_pid());
  throw std::logic_error("bsp_abort returned");  // not reached
}

template <typename T, typename U>
void expect_equal(const T& got, const U& want, const std::string& what) {
  if (!(got == want)) {
    std::ostringstream message;
    message << what << ": expected " << want << ", got " << got;
    fail(message.str());
  }
}

// A std::vector registered for DRMA for as long as this object lives. Construction and
// destruction are collective, like bsp_push_reg and bsp_pop_reg.
template <typename T>
class RegisteredVector {
 public:
  explicit RegisteredVector(std::size_t n, T init = T()) : values_(n, init) { push(); }
  ~RegisteredVector() { bsp_pop_reg(values_.data()); }
  RegisteredVector(const RegisteredVector&) = delete;
  RegisteredVector& operator=(const RegisteredVector&) = delete;

  // Collective: the vector may move in memory, so the registration follows it (effective at
  // the next bsp_sync, like any registration).
  void resize(std::size_t n, T init = T()) {
    bsp_pop_reg(values_.data());
    values_.assign(n, init);
    push();
  }
  T* data() { return values_.data(); }
  T& operator[](std::size_t i) { return values_[i]; }
  std::size_t size() const { return values_.size(); }
  const std::vector<T>& values() const { return values_; }

 private:
  void push() { bsp_push_reg(values_.data(), static_cast<int>(values_.size() * sizeof(T))); }
  std::vector<T> values_;
};

constexpr int kBins = 23;

std::vector<int> input_of(int s, int p) {
  std::size_t count = (p >= 3 && s == 1) ? 0 : 500 + 97 * static_cast<std::size_t>(s);
  std::vector<int> values(count);
  std::uint64_t state = 0x1234567ULL * static_cast<std::uint64_t>(s + 1) + 0xABCDEFULL;
  for (int& v : values) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    v = static_cast<int>((state >> 33) % 1000);
  }
  return values;
}

int owner_of(int bin, int p) { return bin % p; }
int local_index(int bin, int p) { return bin / p; }
int bins_owned(int s, int p) { return (kBins - s + p - 1) / p; }

}  // namespace

int main() {
  bsp_begin(bsp_nprocs());
  const int p = bsp_nprocs(), s = bsp_pid();
  const std::vector<int> mine = input_of(s, p);

  // The reference, from everyone's regenerated input.
  std::vector<long> reference(kBins, 0);
  std::vector<int> everything;
  for (int t = 0; t < p; t++) {
    std::vector<int> theirs = input_of(t, p);
    for (int v : theirs) reference[v % kBins]++;
    everything.insert(everything.end(), theirs.begin(), theirs.end());
  }

  {
    // partial[sender * owned + k]: sender's count of my k-th bin. Starts with room for one
    // sender only and grows, as a program that learns p late would do.
    RegisteredVector<long> partial(static_cast<std::size_t>(bins_owned(s, p)), -1);
    RegisteredVector<long> histogram(kBins, -1);
    RegisteredVector<int> values_copy(mine.size());  // empty on process 1 at p >= 3
    bsp_sync();
    partial.resize(static_cast<std::size_t>(p * bins_owned(s, p)), 0);
    std::copy(mine.begin(), mine.end(), values_copy.data());
    bsp_sync();

    std::vector<long> counts(kBins, 0);
    for (int v : mine) counts[static_cast<std::size_t>(v % kBins)]++;
    for (int t = 0; t < p; t++) {
      std::vector<long> for_t;
      for (int bin = t; bin < kBins; bin += p)
        for_t.push_back(counts[static_cast<std::size_t>(bin)]);
      if (!for_t.empty())
        bsp_put(t, for_t.data(), partial.data(), static_cast<int>(s * for_t.size() * sizeof(long)),
                static_cast<int>(for_t.size() * sizeof(long)));
      // for_t is destroyed here: bsp_put must have copied it already.
    }
    bsp_sync();

    // Sum the owned bins, put them into everyone's histogram.
    const int owned = bins_owned(s, p);
    for (int k = 0; k < owned; k++) {
      long total = 0;
      for (int sender = 0; sender < p; sender++)
        total += partial[static_cast<std::size_t>(sender * owned + k)];
      histogram[static_cast<std::size_t>(k * p + s)] = total;
    }
    bsp_sync();
    for (int bin = 0; bin < kBins; bin++)
      if (owner_of(bin, p) != s)
        bsp_get(owner_of(bin, p), histogram.data(), bin * static_cast<int>(sizeof(long)),
                &histogram[static_cast<std::size_t>(bin)], static_cast<int>(sizeof(long)));
    bsp_sync();
    for (int bin = 0; bin < kBins; bin++)
      expect_equal(histogram[static_cast<std::size_t>(bin)],
                   reference[static_cast<std::size_t>(bin)],
                   "histogram bin " + std::to_string(bin));
    expect_equal(local_index(kBins - 1, p) < bins_owned(owner_of(kBins - 1, p), p), true,
                 "bin layout");

    // Every process reads the next process's values back from its registered vector.
    const int next = (s + 1) % p;
    const std::vector<int> next_input = input_of(next, p);
    std::vector<int> fetched(next_input.size(), -1);
    if (!fetched.empty())
      bsp_get(next, values_copy.data(), 0, fetched.data(),
              static_cast<int>(fetched.size() * sizeof(int)));
    bsp_sync();
    expect_equal(fetched == next_input, true,
                 "values fetched from process " + std::to_string(next));
  }  // the three registrations are popped here, effective at the next sync
  bsp_sync();

  // Messages with std::pair payloads: each process sends its three largest values, weighted,
  // to process 0 (tag: sender pid), which checks them against the reference.
  int tagsize = static_cast<int>(sizeof(int));
  bsp_set_tagsize(&tagsize);
  bsp_sync();
  std::vector<int> sorted = mine;
  std::sort(sorted.begin(), sorted.end(), std::greater<int>());
  std::vector<std::pair<int, double>> top;
  for (std::size_t i = 0; i < std::min<std::size_t>(3, sorted.size()); i++)
    top.emplace_back(sorted[i], sorted[i] * 0.5);
  bsp_send(0, &s, top.data(), static_cast<int>(top.size() * sizeof(top[0])));
  bsp_sync();
  if (s == 0) {
    int messages = 0, nbytes = 0;
    bsp_qsize(&messages, &nbytes);
    expect_equal(messages, p, "messages on process 0");
    std::vector<int> all_top;
    for (int m = 0; m < p; m++) {
      int status = -2, sender = -1;
      bsp_get_tag(&status, &sender);
      if (sender < 0 || sender >= p) fail("message tag " + std::to_string(sender));
      std::vector<std::pair<int, double>> received(static_cast<std::size_t>(status) /
                                                   sizeof(std::pair<int, double>));
      bsp_move(received.data(), status);
      std::vector<int> theirs = input_of(sender, p);
      std::sort(theirs.begin(), theirs.end(), std::greater<int>());
      expect_equal(received.size(), std::min<std::size_t>(3, theirs.size()),
                   "top values from " + std::to_string(sender));
      for (std::size_t i = 0; i < received.size(); i++) {
        expect_equal(received[i].first, theirs[i],
                     "top value " + std::to_string(i) + " from " + std::to_string(sender));
        expect_equal(received[i].second, theirs[i] * 0.5,
                     "weight " + std::to_string(i) + " from " + std::to_string(sender));
      }
    }
    const long total = std::accumulate(reference.begin(), reference.end(), 0L);
    expect_equal(total, static_cast<long>(everything.size()), "histogram total");
  }
  bsp_sync();
  bsp_end();
  std::cout << "PASS vectors" << std::endl;
  return 0;
}
