// stage_executable: copy a program to a host over SFTP, into a cache keyed by its content.
#include "hosts.h"
#include "ssh_connection.h"

#include <libssh/sftp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <memory>
#include <vector>

namespace bspg::hosts {
namespace {

struct LocalFile {
  std::string error;
  std::vector<char> bytes;
  std::string key;       // "<size>-<hash>": names the cache folder, so equal content shares a folder
  unsigned mode = 0700;
};

// FNV-1a: only tells different builds apart inside the user's own cache, so no cryptographic hash.
uint64_t content_hash(const std::vector<char>& bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

LocalFile read_local(const std::string& path) {
  LocalFile file;
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    file.error = "cannot read " + path + ": " + std::strerror(errno);
    return file;
  }
  if (!S_ISREG(info.st_mode)) {
    file.error = path + " is not a regular file";
    return file;
  }
  std::ifstream in(path, std::ios::binary);
  file.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    file.error = "cannot read " + path + ": " + std::strerror(errno);
    return file;
  }
  char key[64];
  std::snprintf(key, sizeof key, "%zu-%016" PRIx64, file.bytes.size(), content_hash(file.bytes));
  file.key = key;
  file.mode = (info.st_mode & 0777) | S_IRUSR | S_IXUSR;
  return file;
}

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

struct SftpDeleter {
  void operator()(sftp_session s) const { sftp_free(s); }
};
using Sftp = std::unique_ptr<sftp_session_struct, SftpDeleter>;

struct AttributesDeleter {
  void operator()(sftp_attributes a) const { sftp_attributes_free(a); }
};
using Attributes = std::unique_ptr<sftp_attributes_struct, AttributesDeleter>;

std::string sftp_problem(sftp_session sftp, ssh_session session) {
  switch (sftp_get_error(sftp)) {
    case SSH_FX_PERMISSION_DENIED: return "permission denied";
    case SSH_FX_NO_SUCH_FILE:
    case SSH_FX_NO_SUCH_PATH: return "no such file or directory";
    default: return ssh_get_error(session);
  }
}

// True when `path` on the host is a regular file of `size` bytes that its owner may execute.
bool is_staged(sftp_session sftp, const std::string& path, size_t size) {
  Attributes attributes(sftp_stat(sftp, path.c_str()));
  return attributes && attributes->type == SSH_FILEXFER_TYPE_REGULAR && attributes->size == size &&
         (attributes->permissions & S_IXUSR);
}

// mkdir -p below the home directory; existing folders are fine.
std::string make_dirs(sftp_session sftp, ssh_session session, const std::string& home, const std::string& rel) {
  std::string path = home;
  size_t start = 0;
  while (start < rel.size()) {
    const size_t end = rel.find('/', start);
    path += "/" + rel.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? rel.size() : end + 1;
    if (sftp_mkdir(sftp, path.c_str(), 0700) == 0) continue;
    Attributes attributes(sftp_stat(sftp, path.c_str()));
    if (!attributes || attributes->type != SSH_FILEXFER_TYPE_DIRECTORY)
      return "cannot create " + path + ": " + sftp_problem(sftp, session);
  }
  return "";
}

std::string upload(sftp_session sftp, ssh_session session, const LocalFile& local, const std::string& path) {
  sftp_file file = sftp_open(sftp, path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0700);
  if (file == nullptr) return "cannot create " + path + ": " + sftp_problem(sftp, session);
  constexpr size_t kChunk = 32 * 1024;  // below SFTP's usual packet limit
  for (size_t done = 0; done < local.bytes.size();) {
    const size_t n = std::min(kChunk, local.bytes.size() - done);
    const ssize_t written = sftp_write(file, local.bytes.data() + done, n);
    if (written <= 0) {
      std::string problem = "cannot write " + path + ": " + sftp_problem(sftp, session);
      sftp_close(file);
      return problem;
    }
    done += static_cast<size_t>(written);
  }
  if (sftp_close(file) != SSH_NO_ERROR) return "cannot write " + path + ": " + sftp_problem(sftp, session);
  // The remote umask applies at creation; set the exec bits explicitly.
  if (sftp_chmod(sftp, path.c_str(), local.mode) != 0)
    return "cannot make " + path + " executable: " + sftp_problem(sftp, session);
  return "";
}

}  // namespace

StageResult stage_executable(const HostSpec& host, const std::string& local_path, const ProbeOptions& opt) {
  StageResult result;
  const LocalFile local = read_local(local_path);
  if (!local.error.empty()) {
    result.error = local.error;
    return result;
  }
  detail::Connection connection(host, opt);
  const auto deadline = detail::Clock::now() + std::chrono::milliseconds(opt.timeout_ms);
  if (std::string problem = connection.open(deadline); !problem.empty()) {
    result.error = problem;
    return result;
  }
  ssh_session session = connection.blocking_session();
  Sftp sftp(sftp_new(session));
  if (!sftp || sftp_init(sftp.get()) != SSH_OK) {
    result.error = "no SFTP on the host: " + std::string(ssh_get_error(session));
    return result;
  }
  char* home_c = sftp_canonicalize_path(sftp.get(), ".");
  if (home_c == nullptr) {
    result.error = "cannot find the home directory: " + sftp_problem(sftp.get(), session);
    return result;
  }
  const std::string home = home_c;
  ssh_string_free_char(home_c);

  const std::string folder = ".cache/bspg/stage/" + local.key;
  result.remote_path = (home == "/" ? "" : home) + "/" + folder + "/" + base_name(local_path);
  if (is_staged(sftp.get(), result.remote_path, local.bytes.size())) {
    result.ok = true;
    return result;
  }
  if (std::string problem = make_dirs(sftp.get(), session, home == "/" ? "" : home, folder); !problem.empty()) {
    result.error = problem;
    return result;
  }
  // Write under a private name, then rename: a file at the final path is always complete, even
  // when several bsprun calls stage the same program at once.
  static std::atomic<unsigned> counter{0};
  const std::string part = result.remote_path + ".part-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
  if (std::string problem = upload(sftp.get(), session, local, part); !problem.empty()) {
    sftp_unlink(sftp.get(), part.c_str());
    result.error = problem;
    return result;
  }
  if (sftp_rename(sftp.get(), part.c_str(), result.remote_path.c_str()) != 0) {
    // Someone else finished first (fine), or a damaged old copy is in the way (replace it).
    if (!is_staged(sftp.get(), result.remote_path, local.bytes.size())) {
      sftp_unlink(sftp.get(), result.remote_path.c_str());
      if (sftp_rename(sftp.get(), part.c_str(), result.remote_path.c_str()) != 0) {
        result.error = "cannot rename " + part + ": " + sftp_problem(sftp.get(), session);
        sftp_unlink(sftp.get(), part.c_str());
        return result;
      }
    } else {
      sftp_unlink(sftp.get(), part.c_str());
    }
  }
  result.copied = true;
  result.ok = true;
  return result;
}

}  // namespace bspg::hosts
