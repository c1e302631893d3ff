// racelab/atomic_file.h: write to a temporary file, fsync, rename, fsync the directory.
#include "racelab/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "racelab/file_error.h"

namespace racelab {
namespace {

[[noreturn]] void fail(const std::string& step, const std::string& file, int err) {
  throw FileError("cannot " + step + " " + file + ": " + std::strerror(err));
}

// The directory holding `path` ("." for a bare name).
std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

void write_file_atomically(const std::string& path, std::initializer_list<std::string_view> pieces) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("create", tmp, errno);
  // On any failure below: close what is open, remove the temporary file, report.
  auto abandon = [&](const char* step, int err, bool close_fd) {
    if (close_fd) ::close(fd);
    ::unlink(tmp.c_str());
    fail(step, tmp, err);
  };
  for (std::string_view piece : pieces) {
    while (!piece.empty()) {
      const ssize_t n = ::write(fd, piece.data(), piece.size());
      if (n < 0) {
        if (errno == EINTR) continue;  // e.g. a Ctrl-C arriving while a checkpoint is saved
        abandon("write", errno, true);
      }
      piece.remove_prefix(static_cast<size_t>(n));
    }
  }
  if (::fsync(fd) != 0) abandon("fsync", errno, true);
  if (::close(fd) != 0) abandon("close", errno, false);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw FileError("cannot rename " + tmp + " to " + path + ": " + std::strerror(err));
  }
  // The rename lives in the directory: without this a crash can bring back the old file.
  const std::string dir = directory_of(path);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) fail("open directory", dir, errno);
  const int sync_rc = ::fsync(dfd);
  const int sync_err = errno;
  ::close(dfd);
  if (sync_rc != 0) fail("fsync directory", dir, sync_err);
}

}  // namespace racelab
