#include "campaign/relative_path.h"

namespace racelab::campaign {

namespace fs = std::filesystem;

std::string relative_to(const std::string& path, const fs::path& dir) {
  if (path.empty()) return path;
  const fs::path rel =
      fs::absolute(path).lexically_normal().lexically_relative(fs::absolute(dir).lexically_normal());
  return rel.empty() ? path : rel.string();
}

std::string relative_if_inside(const std::string& path, const fs::path& dir) {
  const std::string rel = relative_to(path, dir);
  const bool outside = rel == ".." || rel.rfind("../", 0) == 0;
  return outside ? fs::absolute(path).lexically_normal().string() : rel;
}

std::string resolve_from(const std::string& path, const fs::path& dir) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::absolute(dir) / path).lexically_normal().string();
}

}  // namespace racelab::campaign
