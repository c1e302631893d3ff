// racelab/jsonl.h: one write(2) per line; a failed line is cut back off.
#include "racelab/jsonl.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "racelab/file_error.h"

namespace racelab {
namespace {

[[noreturn]] void fail(const std::string& step, const std::string& path, int err) {
  throw FileError("cannot " + step + " " + path + ": " + std::strerror(err));
}

// The offset just past the last '\n' in the first `size` bytes of `fd` (0 when
// there is none).
off_t end_of_last_line(int fd, off_t size) {
  char buf[4096];
  off_t pos = size;
  while (pos > 0) {
    const off_t from = pos > static_cast<off_t>(sizeof(buf)) ? pos - static_cast<off_t>(sizeof(buf)) : 0;
    const ssize_t n = ::pread(fd, buf, static_cast<size_t>(pos - from), from);
    if (n <= 0) return size;  // unreadable: leave it alone
    for (ssize_t i = n; i > 0; --i)
      if (buf[i - 1] == '\n') return from + i;
    pos = from;
  }
  return 0;
}

}  // namespace

JsonlWriter::JsonlWriter(const std::string& path, Mode mode) : path_(path) {
  const bool append = mode == Mode::kAppend;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | (append ? 0 : O_TRUNC), 0644);
  if (fd_ < 0) fail(append ? "append to" : "write", path, errno);
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    fail("stat", path, err);
  }
  end_ = end_of_last_line(fd_, st.st_size);
  if (end_ < st.st_size) {
    // A writer killed mid-line left a fragment: the next line must not join it.
    if (::ftruncate(fd_, end_) != 0) {
      const int err = errno;
      ::close(fd_);
      fail("cut the torn last line of", path, err);
    }
    repaired_ = st.st_size - end_;
  }
}

JsonlWriter::~JsonlWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void JsonlWriter::write(const nlohmann::json& record) {
  const std::string line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::pwrite(fd_, line.data() + done, line.size() - done, end_ + static_cast<off_t>(done));
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const int err = n < 0 ? errno : ENOSPC;  // a write of 0 bytes: nothing more fits
    // Cutting frees the blocks the half line took, so this works on a full disk too.
    if (done > 0 && ::ftruncate(fd_, end_) != 0)
      throw FileError("cannot write " + path_ + ": " + std::strerror(err) +
                               "; and cannot cut the partial line back off: " + std::strerror(errno));
    fail("write", path_, err);
  }
  end_ += static_cast<off_t>(line.size());
}

void JsonlWriter::sync() {
  if (::fsync(fd_) != 0) fail("fsync", path_, errno);
}

}  // namespace racelab
