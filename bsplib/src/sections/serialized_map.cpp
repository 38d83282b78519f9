// serialized_map.cpp - process 0's address map as bytes for the broadcast, and read back.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "globals_internal.hpp"

namespace bspg::globals_internal {
namespace {

// ---- Serialising process 0's address map ----------------------------------------------------

void put_u64(std::vector<unsigned char>& out, std::uint64_t v) {
  const unsigned char* b = reinterpret_cast<const unsigned char*>(&v);
  out.insert(out.end(), b, b + sizeof v);
}

}  // namespace

std::vector<unsigned char> serialize(const AddressMap& map) {
  std::vector<unsigned char> out;
  put_u64(out, map.objects.size());
  for (const LoadedObject& o : map.objects) {
    put_u64(out, o.base);
    put_u64(out, o.key);
    put_u64(out, o.name.size());
    out.insert(out.end(), o.name.begin(), o.name.end());
  }
  put_u64(out, map.intervals.size());
  for (const Interval& i : map.intervals) {
    put_u64(out, i.begin);
    put_u64(out, i.end);
    put_u64(out, static_cast<std::uint64_t>(i.kind));
    put_u64(out, i.object);
  }
  put_u64(out, map.start.size());
  for (const Place& p : map.start) {
    put_u64(out, p.begin);
    put_u64(out, p.end);
    put_u64(out, static_cast<std::uint64_t>(p.kind));
    put_u64(out, p.index);
    put_u64(out, p.name.size());
    out.insert(out.end(), p.name.begin(), p.name.end());
  }
  return out;
}

namespace {

class Reader {
 public:
  explicit Reader(const std::vector<unsigned char>& in) : in_(in) {}
  std::uint64_t u64() {
    std::uint64_t v = 0;
    if (at_ + sizeof v > in_.size()) {
      bad_ = true;
      return 0;
    }
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string text(std::uint64_t nbytes) {
    if (nbytes > in_.size() - at_) {
      bad_ = true;
      return "";
    }
    std::string s(reinterpret_cast<const char*>(in_.data() + at_), nbytes);
    at_ += nbytes;
    return s;
  }
  bool bad() const { return bad_; }

 private:
  const std::vector<unsigned char>& in_;
  std::size_t at_ = 0;
  bool bad_ = false;
};

}  // namespace

bool deserialize(const std::vector<unsigned char>& in, AddressMap& map) {
  Reader r(in);
  const std::uint64_t nobjects = r.u64();
  for (std::uint64_t k = 0; k < nobjects && !r.bad(); ++k) {
    LoadedObject o;
    o.base = r.u64();
    o.key = r.u64();
    o.name = r.text(r.u64());
    map.objects.push_back(std::move(o));
  }
  const std::uint64_t nintervals = r.u64();
  for (std::uint64_t k = 0; k < nintervals && !r.bad(); ++k) {
    Interval i;
    i.begin = r.u64();
    i.end = r.u64();
    const std::uint64_t kind = r.u64();
    i.object = static_cast<std::uint32_t>(r.u64());
    if (kind > static_cast<std::uint64_t>(Kind::File) ||
        (kind == 0 && i.object >= map.objects.size()))
      return false;
    i.kind = static_cast<Kind>(kind);
    map.intervals.push_back(i);
  }
  const std::uint64_t nplaces = r.u64();
  for (std::uint64_t k = 0; k < nplaces && !r.bad(); ++k) {
    Place p;
    p.begin = r.u64();
    p.end = r.u64();
    const std::uint64_t kind = r.u64();
    p.index = r.u64();
    p.name = r.text(r.u64());
    if (p.end <= p.begin || kind > static_cast<std::uint64_t>(PlaceKind::EnvpArray)) return false;
    p.kind = static_cast<PlaceKind>(kind);
    map.start.push_back(std::move(p));
  }
  if (r.bad()) return false;
  // Sorted and apart, so that the search finds the one place holding an address.
  for (std::size_t k = 1; k < map.start.size(); ++k)
    if (map.start[k].begin < map.start[k - 1].end) return false;
  map.index();
  return true;
}

}  // namespace bspg::globals_internal
