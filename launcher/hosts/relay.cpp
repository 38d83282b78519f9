// relay_file: a file from one host to another through this machine, over SFTP. The hosts need not
// reach each other (nor trust each other's keys); bsprun reaches both.
#include <fcntl.h>
#include <libssh/sftp.h>

#include <deque>
#include <vector>

#include "hosts.h"
#include "sftp_host.h"

namespace bspg::hosts {
namespace {

using detail::Attributes;
using detail::SftpHost;

// Reads run ahead of the writes by this many requests of kChunk bytes, so that the source's
// round trips overlap; writes run ahead of their answers as far (SftpWriter; with libssh 0.10,
// which has no asynchronous write, each waits for its answer).
constexpr std::uint32_t kChunk = 64 * 1024;
constexpr std::size_t kReadsAhead = 16;

struct FileCloser {
  void operator()(sftp_file f) const { sftp_close(f); }
};
using File = std::unique_ptr<sftp_file_struct, FileCloser>;

// One read requested and not yet answered: its handle and the bytes it asked for.
struct ReadRequest {
#ifdef BSPG_SFTP_AIO
  sftp_aio handle = nullptr;
#else
  std::uint32_t handle = 0;
#endif
  std::size_t length = 0;
};

// Asks for the next `length` bytes of `in`; false when the request could not be sent.
bool begin_read(sftp_file in, std::size_t length, ReadRequest& request) {
#ifdef BSPG_SFTP_AIO
  const ssize_t asked = sftp_aio_begin_read(in, length, &request.handle);
  if (asked <= 0) return false;
  request.length = static_cast<std::size_t>(asked);  // capped at the server's limit
#else
  const int id = sftp_async_read_begin(in, static_cast<std::uint32_t>(length));
  if (id < 0) return false;
  request.handle = static_cast<std::uint32_t>(id);
  request.length = length;
#endif
  return true;
}

// The answer to `request`, into `buffer` (at least request.length bytes): bytes read, 0 at the
// end of the file, < 0 on an error.
long end_read(sftp_file in, ReadRequest& request, char* buffer) {
#ifdef BSPG_SFTP_AIO
  (void)in;
  return static_cast<long>(sftp_aio_wait_read(&request.handle, buffer, request.length));
#else
  return sftp_async_read(in, buffer, static_cast<std::uint32_t>(request.length), request.handle);
#endif
}

// Requests left unanswered after an error.
void drop_reads(std::deque<ReadRequest>& pending) {
#ifdef BSPG_SFTP_AIO
  for (ReadRequest& request : pending) sftp_aio_free(request.handle);
#endif
  pending.clear();
}

std::string copy_bytes(SftpHost& from, sftp_file in, std::uint64_t size, SftpHost& to,
                       sftp_file out, const std::string& from_path, const std::string& to_path,
                       std::uint64_t& copied) {
  detail::SftpWriter writer(to, out, to_path, kChunk);
  std::deque<ReadRequest> pending;  // requested reads, in file order
  std::uint64_t requested = 0;
  std::vector<char> buffer(kChunk);
  const auto failed = [&pending](std::string problem) {
    drop_reads(pending);
    return problem;
  };
  for (;;) {
    while (pending.size() < kReadsAhead && requested < size) {
      ReadRequest request;
      if (!begin_read(in, kChunk, request))
        return failed("cannot read " + from_path + ": " + from.problem());
      pending.push_back(request);
      requested += request.length;
    }
    if (pending.empty()) return writer.finish();
    ReadRequest request = pending.front();
    pending.pop_front();
    const long got = end_read(in, request, buffer.data());
    if (got < 0) return failed("cannot read " + from_path + ": " + from.problem());
    if (got == 0) {  // the end: the file shrank since its size was read
      if (copied != size) return failed(from_path + " changed while it was copied");
      continue;
    }
    // Each request read at its own offset: a short read before the end would leave a hole.
    if (static_cast<std::size_t>(got) < request.length &&
        copied + static_cast<std::uint64_t>(got) < size)
      return failed("short read from " + from_path);
    if (std::string problem = writer.write(buffer.data(), static_cast<std::size_t>(got));
        !problem.empty())
      return failed(problem);
    copied += static_cast<std::uint64_t>(got);
  }
}

}  // namespace

RelayResult relay_file(const HostSpec& from, const std::string& from_path, const HostSpec& to,
                       const std::string& to_path, const ProbeOptions& opt) {
  RelayResult result;
  SftpHost source(from, opt), target(to, opt);
  if (std::string problem = source.open(); !problem.empty()) {
    result.host = from.name;
    result.error = from.name + ": " + problem;
    return result;
  }
  if (std::string problem = target.open(); !problem.empty()) {
    result.host = to.name;
    result.error = to.name + ": " + problem;
    return result;
  }
  const std::string in_path = source.absolute(from_path), out_path = target.absolute(to_path);
  // A shard is copied as the file it is, never through a symlink planted in its place.
  if (Attributes link(sftp_lstat(source.sftp(), in_path.c_str()));
      link && link->type != SSH_FILEXFER_TYPE_REGULAR) {
    result.host = from.name;
    result.error = from.name + ": " + in_path + " is not a regular file";
    return result;
  }
  File in(sftp_open(source.sftp(), in_path.c_str(), O_RDONLY, 0));
  if (!in) {
    result.host = from.name;
    result.error = from.name + ": cannot open " + in_path + ": " + source.problem();
    return result;
  }
  Attributes attributes(sftp_fstat(in.get()));
  if (!attributes || attributes->type != SSH_FILEXFER_TYPE_REGULAR) {
    result.host = from.name;
    result.error = from.name + ": " + in_path + " is not a regular file";
    return result;
  }
  if (std::string problem = target.make_directories(out_path.substr(0, out_path.rfind('/')));
      !problem.empty()) {
    result.host = to.name;
    result.error = to.name + ": " + problem;
    return result;
  }
  // The folder the file goes to, and the one above it (the checkpoint directory), must be
  // directories themselves, not symlinks to elsewhere.
  const std::string folder = out_path.substr(0, out_path.rfind('/'));
  for (const std::string& dir : {folder.substr(0, folder.rfind('/')), folder}) {
    if (dir.empty()) continue;
    Attributes link(sftp_lstat(target.sftp(), dir.c_str()));
    if (!link || link->type != SSH_FILEXFER_TYPE_DIRECTORY) {
      result.host = to.name;
      result.error = to.name + ": " + dir + " is not a directory (a symbolic link?)";
      return result;
    }
  }
  // Under a private name until whole and synced: the file at to_path is complete or absent.
  const std::string part = SftpHost::part_name(out_path);
  // O_EXCL: a symlink planted under the private name is not written through.
  File out(sftp_open(target.sftp(), part.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600));
  if (!out) {
    result.host = to.name;
    result.error = to.name + ": cannot create " + part + ": " + target.problem();
    return result;
  }
  std::string problem = copy_bytes(source, in.get(), attributes->size, target, out.get(),
                                   from.name + ":" + in_path, to.name + ":" + part, result.bytes);
  if (problem.empty() && sftp_extension_supported(target.sftp(), "fsync@openssh.com", "1") &&
      sftp_fsync(out.get()) != 0)
    problem = to.name + ": cannot sync " + part + ": " + target.problem();
  if (problem.empty() && sftp_close(out.release()) != SSH_NO_ERROR)
    problem = to.name + ": cannot write " + part + ": " + target.problem();
  if (!problem.empty()) {
    out.reset();
    sftp_unlink(target.sftp(), part.c_str());
    result.error = problem;
    result.host = problem.rfind(from.name + ":", 0) == 0 ? from.name : to.name;
    return result;
  }
  if (std::string why = target.replace(part, out_path); !why.empty()) {  // removes the part
    result.host = to.name;
    result.error = to.name + ": " + why;
    return result;
  }
  result.ok = true;
  return result;
}

}  // namespace bspg::hosts
