// racelab/jsonl.h: one fwrite and one fflush per record.
#include "racelab/jsonl.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace racelab {

JsonlWriter::JsonlWriter(const std::string& path, Mode mode) : path_(path) {
  f_ = std::fopen(path.c_str(), mode == Mode::kAppend ? "ae" : "we");
  if (f_ == nullptr)
    throw std::runtime_error("cannot " + std::string(mode == Mode::kAppend ? "append to " : "write ") + path + ": " +
                             std::strerror(errno));
}

JsonlWriter::~JsonlWriter() {
  if (f_ != nullptr) std::fclose(f_);
}

void JsonlWriter::write(const nlohmann::json& record) {
  const std::string line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), f_) != line.size() || std::fflush(f_) != 0)
    throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(errno));
}

void JsonlWriter::sync() {
  if (std::fflush(f_) != 0 || ::fsync(::fileno(f_)) != 0)
    throw std::runtime_error("cannot fsync " + path_ + ": " + std::strerror(errno));
}

}  // namespace racelab
