// SftpHost: see sftp_host.h.
#include "sftp_host.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

namespace bspg::hosts::detail {

std::string SftpHost::open() {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
  if (std::string problem = connection_.open(deadline); !problem.empty()) return problem;
  session_ = connection_.blocking_session();
  sftp_.reset(sftp_new(session_));
  if (!sftp_ || sftp_init(sftp_.get()) != SSH_OK)
    return "no SFTP on the host: " + std::string(ssh_get_error(session_));
  char* home = sftp_canonicalize_path(sftp_.get(), ".");
  if (home == nullptr) return "cannot find the home directory: " + problem();
  home_ = home;
  ssh_string_free_char(home);
  if (home_ == "/") home_.clear();
  return "";
}

std::string SftpHost::problem() const {
  switch (sftp_get_error(sftp_.get())) {
    case SSH_FX_PERMISSION_DENIED:
      return "permission denied";
    case SSH_FX_NO_SUCH_FILE:
    case SSH_FX_NO_SUCH_PATH:
      return "no such file or directory";
    default:
      return ssh_get_error(session_);
  }
}

std::string SftpHost::absolute(const std::string& path) const {
  return !path.empty() && path[0] == '/' ? path : home_ + "/" + path;
}

std::string SftpHost::write_all(sftp_file file, const char* data, std::size_t size,
                                const std::string& path, std::size_t piece) const {
  SftpWriter writer(*this, file, path, piece);
  if (std::string problem = writer.write(data, size); !problem.empty()) return problem;
  return writer.finish();
}

SftpWriter::~SftpWriter() {
#ifdef BSPG_SFTP_AIO
  // Abandoned after an error: the answers still due are not waited for.
  for (sftp_aio aio : pending_) sftp_aio_free(aio);
#endif
}

std::string SftpWriter::write(const char* data, std::size_t size) {
  for (std::size_t done = 0; error_.empty() && done < size;) {
    const std::size_t piece = std::min(piece_, size - done);
#ifdef BSPG_SFTP_AIO
    if (pending_.size() >= kAhead && !settle_oldest().empty()) break;
    sftp_aio aio = nullptr;
    const ssize_t sent = sftp_aio_begin_write(file_, data + done, piece, &aio);
    if (sent <= 0) {
      error_ = "cannot write " + path_ + ": " + host_.problem();
      break;
    }
    pending_.push_back(aio);
#else
    const ssize_t sent = sftp_write(file_, data + done, piece);
    if (sent <= 0) {
      error_ = "cannot write " + path_ + ": " + host_.problem();
      break;
    }
#endif
    done += static_cast<std::size_t>(sent);
  }
  return error_;
}

std::string SftpWriter::settle_oldest() {
#ifdef BSPG_SFTP_AIO
  sftp_aio aio = pending_.front();
  pending_.pop_front();
  if (sftp_aio_wait_write(&aio) < 0 && error_.empty())
    error_ = "cannot write " + path_ + ": " + host_.problem();
#endif
  return error_;
}

std::string SftpWriter::finish() {
#ifdef BSPG_SFTP_AIO
  while (error_.empty() && !pending_.empty()) settle_oldest();
#endif
  return error_;
}

std::string SftpHost::make_directories(const std::string& path) {
  std::string partial;
  // The home directory exists: below it, no round trips for the folders above it.
  std::size_t at = path.rfind(home_ + "/", 0) == 0 && home_.size() > 1 ? home_.size() : 0;
  while (at != std::string::npos) {
    at = path.find('/', at + 1);
    partial = path.substr(0, at);
    if (partial.empty() || sftp_mkdir(sftp_.get(), partial.c_str(), 0700) == 0) continue;
    Attributes attributes(sftp_stat(sftp_.get(), partial.c_str()));
    if (!attributes || attributes->type != SSH_FILEXFER_TYPE_DIRECTORY)
      return "cannot create " + partial + ": " + problem();
  }
  return "";
}

std::string SftpHost::part_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".part-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
}

std::string SftpHost::replace(const std::string& part, const std::string& path) {
  if (sftp_rename(sftp_.get(), part.c_str(), path.c_str()) == 0) return "";
  return rename_over(part, path);
}

std::string SftpHost::rename_over(const std::string& part, const std::string& path) {
  // SFTP version 3 does not rename over an existing file.
  sftp_unlink(sftp_.get(), path.c_str());
  if (sftp_rename(sftp_.get(), part.c_str(), path.c_str()) == 0) return "";
  std::string why = "cannot rename " + part + " to " + path + ": " + problem();
  sftp_unlink(sftp_.get(), part.c_str());
  return why;
}

}  // namespace bspg::hosts::detail
