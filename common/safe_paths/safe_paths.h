// safe_paths.h - directories and files that no one else can redirect: what bspg and its tools
// write (checkpoints, profiles, plots, benchmark tables) lands where the user asked, never
// through a symbolic link planted by another user, and no open of a user-named file blocks.
//
// Whom a path trusts: a directory owned by this user or by root. A symbolic link is followed only
// where it lies in such a directory, and, where that directory can be written by others (/tmp),
// only if this user or the directory's owner owns the link (the kernel's protected_symlinks
// rule, kept whatever the system's setting). A directory that others can write and that is owned
// by another user, without the sticky bit, is not passed through: anyone could rename what is in
// it. Cost: one fstatat and one openat per path component; no I/O beyond the inodes.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <string>

namespace bspg::safe_paths {

// A directory opened for use, or why not. `refusal`: the path is not this user's to use (said as a
// whole sentence, naming the path and the cause); `failed_path` + `error`: the system refused
// (the component that failed and strerror).
struct OpenedDirectory {
  int fd = -1;  // O_RDONLY | O_DIRECTORY, close-on-exec; -1 unless usable
  std::string refusal;
  std::string failed_path, error;
  bool ok() const { return fd >= 0; }
  // The refusal, or "PATH: ERROR".
  std::string why() const;
};

// Walks `path` (absolute, or relative to the working directory) one component at a time without
// letting the kernel follow any link, creating missing directories with mode 0700 when `create`.
// The directory itself must be a real directory (not a link) owned by this user and writable by
// no one else. `what` names it in refusals ("the checkpoint directory", "the profile directory").
OpenedDirectory open_own_directory(const std::string& path, const std::string& what, bool create);

// Opens NAME in the directory `dir_fd` for reading and writing, created with `mode` or emptied:
// never through a link, never blocking (a FIFO is refused), and only a regular file owned by this
// user. Returns the descriptor (close-on-exec, blocking) or -1 with `error` set to a phrase such as
// "it is a FIFO (named pipe), not a regular file" or strerror.
int create_file_at(int dir_fd, const std::string& name, std::string& error, mode_t mode = 0644);

// The same for a path: its directory is checked as open_own_directory does (without creating).
// `error` then names the cause in a whole phrase (the path is the caller's to name).
int create_file(const std::string& path, std::string& error, mode_t mode = 0644);

// A file the user named (bsprun --rsl-out, a benchmark's table): as create_file, but its directory
// may also be root's, and writable by others where the sticky bit keeps them from this user's
// files (/tmp); another user's directory is refused.
int create_named_file(const std::string& path, std::string& error, mode_t mode = 0644);

// create_file() (or, with own_directory false, create_named_file()) as a stdio stream ("w",
// "w+b"...): nullptr with `error` set on failure.
std::FILE* create_stream(const std::string& path, const char* stdio_mode, std::string& error,
                         mode_t mode = 0644, bool own_directory = true);

// Opens a user-named file for reading without blocking on it: only a regular file (a FIFO, a
// device, a socket or a directory is refused at once). Returns the descriptor (blocking again)
// or -1 with `error` set.
int open_regular_file(const std::string& path, std::string& error);

// "a FIFO (named pipe)", "a directory", ...: what st_mode describes, for messages.
std::string file_kind(mode_t mode);

}  // namespace bspg::safe_paths
