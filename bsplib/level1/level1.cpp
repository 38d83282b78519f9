// level1.cpp - the Oxford BSP toolset's level-1 collectives (bsp_level1.h) over the public bsp.h
// API: each call registers its own areas, moves the data in one superstep of puts or gets, and
// pops what it registered. Nothing here uses bspg's internals (this folder sees include/ only).
#include <bsp_level1.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

namespace {

// Misuse: one line "bspg: process P: call: cause", then every process stops (bsp_abort prints
// once when several processes make the same mistake).
[[noreturn]] __attribute__((format(printf, 2, 3))) void misuse(const char* call, const char* format,
                                                               ...) {
  char cause[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(cause, sizeof cause, format, args);
  va_end(args);
  bsp_abort("bspg: process %d: %s: %s\n", bsp_pid(), call, cause);
  std::abort();  // not reached: bsp_abort does not return
}

void check_size(const char* call, int nbytes) {
  if (nbytes < 0) misuse(call, "negative size (%d bytes)", nbytes);
}

void check_root(const char* call, int root) {
  const int nprocs = bsp_nprocs();
  if (root < 0 || root >= nprocs)
    misuse(call, "root %d is out of range (processes 0..%d)", root, nprocs - 1);
}

void check_pointer(const char* call, const void* pointer, const char* what, int nbytes) {
  if (pointer == nullptr && nbytes > 0) misuse(call, "%s is NULL (%d bytes to move)", what, nbytes);
}

// count * nbytes as an int, or misuse when it reaches 2 GiB (sizes and offsets are int).
int total_size(const char* call, int count, int nbytes) {
  const long long total = static_cast<long long>(count) * nbytes;
  if (total > INT_MAX)
    misuse(call, "%d blocks of %d bytes make %lld bytes, beyond the 2 GiB of one transfer", count,
           nbytes, total);
  return static_cast<int>(total);
}

// An area registered for one call: pushed at construction, popped at destruction (the pop takes
// effect at the next sync, as every bsp_pop_reg does). Objects are destroyed in reverse order,
// so pops mirror pushes.
class Registration {
 public:
  Registration(const void* area, int nbytes) : area_(area) { bsp_push_reg(area, nbytes); }
  ~Registration() { bsp_pop_reg(area_); }
  Registration(const Registration&) = delete;
  Registration& operator=(const Registration&) = delete;

 private:
  const void* area_;
};

// Every process's nbytes at src, in pid order, on every process; with prefix, process i gets
// only blocks 0..i (what a scan needs). 2 supersteps: registration, total exchange;
// h = (p-1)*nbytes.
std::vector<char> exchange(const char* call, const void* src, int nbytes, bool prefix) {
  const int pid = bsp_pid(), nprocs = bsp_nprocs();
  const int blocks = prefix ? pid + 1 : nprocs;
  const int table_bytes = total_size(call, blocks, nbytes);
  std::vector<char> table(static_cast<size_t>(table_bytes) + 1);
  Registration reg(table.data(), table_bytes);
  bsp_sync();
  if (nbytes > 0)
    for (int q = prefix ? pid : 0; q < nprocs; ++q)
      bsp_put(q, src, table.data(), pid * nbytes, nbytes);
  bsp_sync();
  return table;
}

// Left-to-right fold of blocks 0..count-1 of table with the program's operator, into dst.
void fold_blocks(bsp_level1_op op, const std::vector<char>& table, int count, void* dst,
                 int nbytes) {
  if (nbytes == 0) return;
  std::vector<char> acc(table.begin(), table.begin() + nbytes), right(nbytes), res(nbytes);
  for (int i = 1; i < count; ++i) {
    std::memcpy(right.data(), table.data() + static_cast<size_t>(i) * nbytes, nbytes);
    int size = nbytes;  // the operator may not change ours
    op(res.data(), acc.data(), right.data(), &size);
    acc.swap(res);
  }
  std::memcpy(dst, acc.data(), nbytes);
}

// The values of one type of every process (blocks 0..upto-1), as a vector.
template <typename T>
std::vector<T> values(const char* call, T x, bool prefix) {
  const int upto = prefix ? bsp_pid() + 1 : bsp_nprocs();
  const std::vector<char> table = exchange(call, &x, sizeof(T), prefix);
  std::vector<T> out(upto);
  std::memcpy(out.data(), table.data(), sizeof(T) * upto);
  return out;
}

template <typename T, typename Op>
T reduce(const char* call, T x, bool prefix, Op op) {
  const std::vector<T> all = values(call, x, prefix);
  T acc = all[0];
  for (size_t i = 1; i < all.size(); ++i) acc = op(acc, all[i]);
  return acc;
}

// int sum and product wrap around instead of overflowing (undefined in C and C++).
int add_int(int a, int b) {
  return static_cast<int>(static_cast<unsigned>(a) + static_cast<unsigned>(b));
}
int multiply_int(int a, int b) {
  return static_cast<int>(static_cast<unsigned>(a) * static_cast<unsigned>(b));
}

// min (kSmaller) or max, passing over NaNs (a NaN wins only against another NaN); for ints the
// plain ones.
template <typename T, bool kSmaller>
T extreme(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return b;
    if (std::isnan(b)) return a;
  }
  return (kSmaller ? b < a : a < b) ? b : a;
}
template <typename T>
T min_value(T a, T b) {
  return extreme<T, true>(a, b);
}
template <typename T>
T max_value(T a, T b) {
  return extreme<T, false>(a, b);
}

// Increasing order with NaNs after every number (a strict weak order, unlike < on NaNs).
template <typename T>
bool sorts_before(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

template <typename T>
T sort_one(const char* call, T x) {
  std::vector<T> all = values(call, x, false);
  std::sort(all.begin(), all.end(), sorts_before<T>);
  return all[bsp_pid()];
}

}  // namespace

extern "C" {

void bsp_bcast(int bcast_pid, const void* src, void* dst, int nbytes) {
  static const char call[] = "bsp_bcast";
  check_root(call, bcast_pid);
  check_size(call, nbytes);
  const bool root = bsp_pid() == bcast_pid;
  if (root) check_pointer(call, src, "src", nbytes);
  check_pointer(call, dst, "dst", nbytes);
  Registration reg(dst, nbytes);
  bsp_sync();
  if (root && nbytes > 0) {
    for (int q = 0; q < bsp_nprocs(); ++q)
      if (q != bcast_pid) bsp_put(q, src, dst, 0, nbytes);
    if (dst != src) std::memmove(dst, src, nbytes);
  }
  bsp_sync();
}

void bsp_gather(int gather_pid, const void* src, void* dst, int nbytes) {
  static const char call[] = "bsp_gather";
  check_root(call, gather_pid);
  check_size(call, nbytes);
  const bool root = bsp_pid() == gather_pid;
  const int total = total_size(call, bsp_nprocs(), nbytes);
  check_pointer(call, src, "src", nbytes);
  if (root) check_pointer(call, dst, "dst", total);
  // Processes name a registered area by their own address of it: the others register a
  // place-holder of this call (empty) and name that; their dst is not theirs to give.
  char placeholder = 0;
  void* area = root ? dst : &placeholder;
  Registration reg(area, root ? total : 0);
  bsp_sync();
  // A put copies src at once, so the root's own block may overlap its src.
  if (nbytes > 0) bsp_put(gather_pid, src, area, bsp_pid() * nbytes, nbytes);
  bsp_sync();
}

void bsp_scatter(int scatter_pid, const void* src, void* dst, int nbytes) {
  static const char call[] = "bsp_scatter";
  check_root(call, scatter_pid);
  check_size(call, nbytes);
  const bool root = bsp_pid() == scatter_pid;
  const int total = total_size(call, bsp_nprocs(), nbytes);
  if (root) check_pointer(call, src, "src", total);
  check_pointer(call, dst, "dst", nbytes);
  // As in bsp_gather: the others register and name an empty place-holder of this call.
  char placeholder = 0;
  const void* area = root ? src : &placeholder;
  Registration reg(area, root ? total : 0);
  bsp_sync();
  if (nbytes > 0) bsp_get(scatter_pid, area, bsp_pid() * nbytes, dst, nbytes);
  bsp_sync();
}

void(bsp_fold)(bsp_level1_op op, const void* src, void* dst, int nbytes) {
  static const char call[] = "bsp_fold";
  if (op == nullptr) misuse(call, "the operator is NULL");
  check_size(call, nbytes);
  check_pointer(call, src, "src", nbytes);
  check_pointer(call, dst, "dst", nbytes);
  const std::vector<char> table = exchange(call, src, nbytes, false);
  fold_blocks(op, table, bsp_nprocs(), dst, nbytes);
}

void(bsp_scan)(bsp_level1_op op, const void* src, void* dst, int nbytes) {
  static const char call[] = "bsp_scan";
  if (op == nullptr) misuse(call, "the operator is NULL");
  check_size(call, nbytes);
  check_pointer(call, src, "src", nbytes);
  check_pointer(call, dst, "dst", nbytes);
  const std::vector<char> table = exchange(call, src, nbytes, true);
  fold_blocks(op, table, bsp_pid() + 1, dst, nbytes);
}

int bsp_all(int b) {
  return reduce("bsp_all", b != 0 ? 1 : 0, false, [](int a, int c) { return a & c; });
}
int bsp_any(int b) {
  return reduce("bsp_any", b != 0 ? 1 : 0, false, [](int a, int c) { return a | c; });
}
int bsp_constantI(int x) {
  const std::vector<int> all = values("bsp_constantI", x, false);
  return std::all_of(all.begin(), all.end(), [&](int v) { return v == all[0]; }) ? 1 : 0;
}

int bsp_sumI(int x) { return reduce("bsp_sumI", x, false, add_int); }
float bsp_sumR(float x) { return reduce("bsp_sumR", x, false, std::plus<float>()); }
double bsp_sumD(double x) { return reduce("bsp_sumD", x, false, std::plus<double>()); }
int bsp_sumI_prefix(int x) { return reduce("bsp_sumI_prefix", x, true, add_int); }
float bsp_sumR_prefix(float x) { return reduce("bsp_sumR_prefix", x, true, std::plus<float>()); }
double bsp_sumD_prefix(double x) { return reduce("bsp_sumD_prefix", x, true, std::plus<double>()); }

int bsp_productI(int x) { return reduce("bsp_productI", x, false, multiply_int); }
float bsp_productR(float x) { return reduce("bsp_productR", x, false, std::multiplies<float>()); }
double bsp_productD(double x) {
  return reduce("bsp_productD", x, false, std::multiplies<double>());
}
int bsp_productI_prefix(int x) { return reduce("bsp_productI_prefix", x, true, multiply_int); }
float bsp_productR_prefix(float x) {
  return reduce("bsp_productR_prefix", x, true, std::multiplies<float>());
}
double bsp_productD_prefix(double x) {
  return reduce("bsp_productD_prefix", x, true, std::multiplies<double>());
}

int bsp_minI(int x) { return reduce("bsp_minI", x, false, min_value<int>); }
float bsp_minR(float x) { return reduce("bsp_minR", x, false, min_value<float>); }
double bsp_minD(double x) { return reduce("bsp_minD", x, false, min_value<double>); }
int bsp_minI_prefix(int x) { return reduce("bsp_minI_prefix", x, true, min_value<int>); }
float bsp_minR_prefix(float x) { return reduce("bsp_minR_prefix", x, true, min_value<float>); }
double bsp_minD_prefix(double x) { return reduce("bsp_minD_prefix", x, true, min_value<double>); }

int bsp_maxI(int x) { return reduce("bsp_maxI", x, false, max_value<int>); }
float bsp_maxR(float x) { return reduce("bsp_maxR", x, false, max_value<float>); }
double bsp_maxD(double x) { return reduce("bsp_maxD", x, false, max_value<double>); }
int bsp_maxI_prefix(int x) { return reduce("bsp_maxI_prefix", x, true, max_value<int>); }
float bsp_maxR_prefix(float x) { return reduce("bsp_maxR_prefix", x, true, max_value<float>); }
double bsp_maxD_prefix(double x) { return reduce("bsp_maxD_prefix", x, true, max_value<double>); }

int bsp_sortI(int x) { return sort_one("bsp_sortI", x); }
float bsp_sortR(float x) { return sort_one("bsp_sortR", x); }
double bsp_sortD(double x) { return sort_one("bsp_sortD", x); }
char bsp_sortC(char x) { return sort_one("bsp_sortC", x); }

void bspg_sort_blocks(void* base, int nelem, int size,
                      int (*compare)(const void* left, const void* right)) {
  static const char call[] = "bspg_sort_blocks";
  if (nelem < 0) misuse(call, "negative element count (%d)", nelem);
  if (size <= 0) misuse(call, "element size %d is not positive", size);
  if (compare == nullptr) misuse(call, "the comparison function is NULL");
  const int nbytes = total_size(call, nelem, size);
  check_pointer(call, base, "base", nbytes);
  const int pid = bsp_pid(), nprocs = bsp_nprocs();

  // Supersteps 1-2: every process's element count.
  const std::vector<int> counts = values(call, nelem, false);
  long long total = 0, first = 0;
  for (int q = 0; q < nprocs; ++q) {
    if (q == pid) first = total;
    total += counts[q];
  }
  if (total * size > INT_MAX)
    misuse(call, "%lld elements of %d bytes make more than the 2 GiB of one transfer", total, size);
  const int all_bytes = static_cast<int>(total * size);

  // Supersteps 3-4: every block to every process, at its place in pid order.
  std::vector<char> table(static_cast<size_t>(all_bytes) + 1);
  {
    Registration reg(table.data(), all_bytes);
    bsp_sync();
    if (nbytes > 0)
      for (int q = 0; q < nprocs; ++q)
        bsp_put(q, base, table.data(), static_cast<int>(first * size), nbytes);
    bsp_sync();
  }
  std::qsort(table.data(), static_cast<size_t>(total), static_cast<size_t>(size), compare);
  if (nbytes > 0) std::memcpy(base, table.data() + static_cast<size_t>(first) * size, nbytes);
}

}  // extern "C"
