// sftp_host.h - internal: an SFTP session on a host (login as for probing, then SFTP), with the
// few file operations staging and shard relaying share.
#pragma once

#include <libssh/libssh_version.h>
#include <libssh/sftp.h>

#include <deque>
#include <memory>
#include <string>

#include "hosts.h"
#include "ssh_connection.h"

// libssh 0.11 added asynchronous writes (Debian 13; Debian 12 has 0.10).
#if LIBSSH_VERSION_INT >= SSH_VERSION_INT(0, 11, 0)
#define BSPG_SFTP_AIO 1
#endif

namespace bspg::hosts::detail {

struct SftpDeleter {
  void operator()(sftp_session s) const { sftp_free(s); }
};
struct AttributesDeleter {
  void operator()(sftp_attributes a) const { sftp_attributes_free(a); }
};
using Attributes = std::unique_ptr<sftp_attributes_struct, AttributesDeleter>;

class SftpHost {
 public:
  SftpHost(const HostSpec& host, const ProbeOptions& opt)
      : connection_(host, opt), timeout_ms_(opt.timeout_ms) {}
  // Logs in (within the probe timeout), starts SFTP and finds the home directory. "" or the
  // problem.
  std::string open();
  sftp_session sftp() const { return sftp_.get(); }
  // The server's reason for the last failed operation, in a few words.
  std::string problem() const;
  // `path` made absolute: a relative path starts at the home directory, as in ssh commands.
  std::string absolute(const std::string& path) const;
  // Writes all `size` bytes at `data` to `file`, in writes of at most `piece` bytes (32 KiB, the
  // packet size every SFTP server takes, unless the caller knows better). "" or "cannot write
  // `path`: problem".
  std::string write_all(sftp_file file, const char* data, std::size_t size, const std::string& path,
                        std::size_t piece = 32 * 1024) const;
  // mkdir -p of an absolute directory; existing directories are fine. "" or the problem.
  std::string make_directories(const std::string& path);
  // A name next to `path` that no other writer uses ("<path>.part-<pid>-<n>").
  static std::string part_name(const std::string& path);
  // Renames `part` over `path`, replacing what is there. "" or the problem (`part` is removed
  // then).
  std::string replace(const std::string& part, const std::string& path);
  // The same, once a plain rename failed: removes what is at `path` first.
  std::string rename_over(const std::string& part, const std::string& path);

 private:
  Connection connection_;
  int timeout_ms_;
  ssh_session session_ = nullptr;
  std::unique_ptr<sftp_session_struct, SftpDeleter> sftp_;
  std::string home_;
};

// Writes a file's bytes in order, piece by piece, with up to kAhead writes awaiting the server's
// answer where libssh has asynchronous writes (0.11 on): a write then costs one round trip per
// kAhead pieces, not one per piece, which across a wide-area link is most of a copy's time. With
// libssh 0.10 each write waits for its answer. The data is sent before write() returns, so its
// buffer may be reused at once. Errors: "cannot write `path`: problem"; after one, every later
// call returns it.
class SftpWriter {
 public:
  static constexpr std::size_t kAhead = 16;
  SftpWriter(const SftpHost& host, sftp_file file, std::string path, std::size_t piece)
      : host_(host), file_(file), path_(std::move(path)), piece_(piece) {}
  SftpWriter(const SftpWriter&) = delete;
  SftpWriter& operator=(const SftpWriter&) = delete;
  ~SftpWriter();
  std::string write(const char* data, std::size_t size);
  // Waits for every answer. "" once all were written.
  std::string finish();

 private:
  std::string settle_oldest();
  const SftpHost& host_;
  sftp_file file_;
  std::string path_;
  std::size_t piece_;
  std::string error_;
#ifdef BSPG_SFTP_AIO
  std::deque<sftp_aio> pending_;
#endif
};

}  // namespace bspg::hosts::detail
