// stage_executable: copy a program to a host over SFTP, into a cache keyed by its content.
#include <fcntl.h>
#include <libssh/sftp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include "hosts.h"
#include "sftp_host.h"

namespace bspg::hosts {
namespace {

struct LocalFile {
  std::string error;
  std::vector<char> bytes;
  std::string key;  // "<size>-<hash>": names the cache folder, so equal content shares a folder
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

using detail::Attributes;
using detail::SftpHost;

// True when `path` on the host is a regular file of `size` bytes that its owner may execute.
bool is_staged(sftp_session sftp, const std::string& path, size_t size) {
  Attributes attributes(sftp_stat(sftp, path.c_str()));
  return attributes && attributes->type == SSH_FILEXFER_TYPE_REGULAR && attributes->size == size &&
         (attributes->permissions & S_IXUSR);
}

std::string upload(SftpHost& host, const LocalFile& local, const std::string& path) {
  sftp_file file = sftp_open(host.sftp(), path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0700);
  if (file == nullptr) return "cannot create " + path + ": " + host.problem();
  if (std::string problem = host.write_all(file, local.bytes.data(), local.bytes.size(), path);
      !problem.empty()) {
    sftp_close(file);
    return problem;
  }
  if (sftp_close(file) != SSH_NO_ERROR) return "cannot write " + path + ": " + host.problem();
  // The remote umask applies at creation; set the exec bits explicitly.
  if (sftp_chmod(host.sftp(), path.c_str(), local.mode) != 0)
    return "cannot make " + path + " executable: " + host.problem();
  return "";
}

}  // namespace

StageResult stage_executable(const HostSpec& host, const std::string& local_path,
                             const ProbeOptions& opt) {
  StageResult result;
  const LocalFile local = read_local(local_path);
  if (!local.error.empty()) {
    result.error = local.error;
    return result;
  }
  SftpHost remote(host, opt);
  if (std::string problem = remote.open(); !problem.empty()) {
    result.error = problem;
    return result;
  }
  const std::string folder = remote.absolute(".cache/bspg/stage/" + local.key);
  result.remote_path = folder + "/" + base_name(local_path);
  if (is_staged(remote.sftp(), result.remote_path, local.bytes.size())) {
    result.ok = true;
    return result;
  }
  if (std::string problem = remote.make_directories(folder); !problem.empty()) {
    result.error = problem;
    return result;
  }
  // Write under a private name, then rename: a file at the final path is always complete, even
  // when several bsprun calls stage the same program at once.
  const std::string part = SftpHost::part_name(result.remote_path);
  if (std::string problem = upload(remote, local, part); !problem.empty()) {
    sftp_unlink(remote.sftp(), part.c_str());
    result.error = problem;
    return result;
  }
  if (sftp_rename(remote.sftp(), part.c_str(), result.remote_path.c_str()) != 0) {
    // Someone else finished first (fine), or a damaged old copy is in the way (replace it).
    if (is_staged(remote.sftp(), result.remote_path, local.bytes.size())) {
      sftp_unlink(remote.sftp(), part.c_str());
    } else if (std::string problem = remote.rename_over(part, result.remote_path);
               !problem.empty()) {
      result.error = problem;
      return result;
    }
  }
  result.copied = true;
  result.ok = true;
  return result;
}

}  // namespace bspg::hosts
