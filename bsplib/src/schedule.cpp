#include "schedule.hpp"

#include <cstdio>

namespace bspg {

bool Schedule::any_data() const {
  for (int src = 0; src < nprocs_; ++src)
    for (int dst = 0; dst < nprocs_; ++dst)
      if (stream_bytes(src, dst) || mailbox_bytes(src, dst)) return true;
  return false;
}

bool Schedule::any_mailbox() const {
  for (int src = 0; src < nprocs_; ++src)
    for (int dst = 0; dst < nprocs_; ++dst)
      if (mailbox_bytes(src, dst)) return true;
  return false;
}

bool Schedule::any_gets() const {
  for (int server = 0; server < nprocs_; ++server)
    if (gets_for(server)) return true;
  return false;
}

bool Schedule::gets_for(int server) const {
  for (int requester = 0; requester < nprocs_; ++requester)
    if (reply_bytes(requester, server)) return true;
  return false;
}

std::uint64_t Schedule::stream_offset(int src, int dst) const {
  std::uint64_t offset = 0;
  for (int s = 0; s < src; ++s) offset += stream_bytes(s, dst);
  return offset;
}

std::uint64_t Schedule::incoming_stream_bytes(int dst) const {
  std::uint64_t total = stream_offset(nprocs_, dst);
  return (total + 7) & ~std::uint64_t{7};
}

std::uint64_t Schedule::reply_offset(int requester, int server) const {
  std::uint64_t offset = incoming_stream_bytes(requester);
  for (int d = 0; d < server; ++d) offset += reply_bytes(requester, d);
  return offset;
}

std::uint64_t Schedule::window_bytes_needed(int pid) const { return reply_offset(pid, nprocs_); }

namespace {

const char* call_name(std::uint64_t call) {
  switch (static_cast<SyncCall>(call)) {
    case SyncCall::Sync: return "bsp_sync";
    case SyncCall::End: return "bsp_end";
  }
  return "an unknown call";
}

std::string num(std::uint64_t word) { return std::to_string(static_cast<long long>(word)); }

}  // namespace

Schedule::Disagreement Schedule::check() const {
  Disagreement verdict;
  // Compare every process with process 0; the first that differs reports.
  for (int pid = 1; pid < nprocs_ && !verdict.found; ++pid) {
    if (header(pid, kCall) != header(0, kCall)) {
      verdict = {true, pid, call_name(header(pid, kCall)), ""};
      char text[512];
      snprintf(text, sizeof text,
               "processes disagree: process 0 called %s while process %d called %s (every process "
               "must make the same sequence of bsp_sync calls and end with bsp_end)",
               call_name(header(0, kCall)), pid, call_name(header(pid, kCall)));
      verdict.message = text;
    } else if (header(pid, kPushCount) != header(0, kPushCount)) {
      verdict = {true, pid, "bsp_push_reg", ""};
      verdict.message = "processes disagree at this bsp_sync: process 0 registered " +
                        num(header(0, kPushCount)) + " area(s), process " + std::to_string(pid) +
                        " registered " + num(header(pid, kPushCount)) +
                        " (bsp_push_reg is collective: every process makes the same calls)";
    } else if (header(pid, kPopCount) != header(0, kPopCount) ||
               header(pid, kPopDigest) != header(0, kPopDigest)) {
      verdict = {true, pid, "bsp_pop_reg", ""};
      auto describe = [this](int who) {
        std::string text = "pops " + num(header(who, kPopCount)) + " registration(s)";
        if (header(who, kFirstPop)) text += " starting with slot " + num(header(who, kFirstPop) - 1);
        return text;
      };
      verdict.message = "processes disagree at this bsp_sync: process 0 " + describe(0) +
                        ", process " + std::to_string(pid) + " " + describe(pid) +
                        " (pops must name the same registrations in the same order everywhere)";
    } else if (header(pid, kTagSize) != header(0, kTagSize)) {
      verdict = {true, pid, "bsp_set_tagsize", ""};
      auto describe = [](std::uint64_t word) {
        return word == 0 ? std::string("does not change the tag size")
                         : "sets " + std::to_string(word - 1) + " bytes";
      };
      verdict.message = "processes disagree at this bsp_sync: process 0 " +
                        describe(header(0, kTagSize)) + ", process " + std::to_string(pid) + " " +
                        describe(header(pid, kTagSize)) +
                        " (bsp_set_tagsize is collective, with the same size everywhere)";
    }
  }
  return verdict;
}

}  // namespace bspg
