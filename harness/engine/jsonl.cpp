#include "engine/jsonl.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace racelab {

JsonlWriter::JsonlWriter(const std::string& path) : path_(path) {
  f_ = std::fopen(path.c_str(), "ae");
  if (f_ == nullptr) throw std::runtime_error(fmt::format("cannot append to {}: {}", path, std::strerror(errno)));
}

JsonlWriter::~JsonlWriter() {
  if (f_ != nullptr) std::fclose(f_);
}

void JsonlWriter::write(const nlohmann::json& record) {
  std::string line = record.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), f_) != line.size() || std::fflush(f_) != 0)
    throw std::runtime_error(fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
}

}  // namespace racelab
