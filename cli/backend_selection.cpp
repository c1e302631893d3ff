// cli/backend_selection.cpp -- see backend_selection.h.
#include "cli/backend_selection.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/python_host.h"
#include "racelab/workload.h"

namespace racelab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// FILE itself, or a directory's *.json in name order (as the loader reads them).
std::vector<std::string> expand(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {path};
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(path, ec))
    if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

json read_json(const std::string& file) {
  std::ifstream in(file);
  if (!in) return nullptr;
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
}

}  // namespace

bool select_backends(const std::string& backends, const std::vector<std::string>& paths,
                     const std::string& catalogue, std::vector<std::string>* files, std::string* error) {
  std::set<std::string> want;
  std::stringstream ss(backends);
  for (std::string b; std::getline(ss, b, ',');) {
    if (b != "model" && b != "pytorch") {
      *error = "--backend: found \"" + b + "\", expected model, pytorch or model,pytorch";
      return false;
    }
    want.insert(b);
  }
  if (want.empty()) {
    *error = "--backend: found nothing, expected model, pytorch or model,pytorch";
    return false;
  }
  std::vector<std::string> roots = paths;
  if (roots.empty()) {
    if (want.count("model")) roots.push_back(catalogue);
    if (want.count("pytorch")) roots.push_back((fs::path(catalogue) / "pytorch").string());
  }
  struct Entry {
    std::string file;
    json doc;
  };
  std::vector<Entry> chosen;
  std::set<std::string> names;
  for (const auto& root : roots)
    for (const auto& file : expand(root)) {
      json doc = read_json(file);
      if (!doc.is_object()) {
        chosen.push_back({file, doc});  // the loader names the problem
        continue;
      }
      const Workload* w = doc.contains("workload") && doc["workload"].is_string()
                              ? find_workload(doc["workload"].get<std::string>())
                              : nullptr;
      const std::string backend = w != nullptr && w->host == kPythonHost ? "pytorch" : "model";
      if (w != nullptr && !want.count(backend)) continue;
      chosen.push_back({file, doc});
      if (doc.contains("name") && doc["name"].is_string()) names.insert(doc["name"].get<std::string>());
    }
  std::vector<std::string> twins;
  if (want.count("model"))
    for (const auto& e : chosen) {
      if (!e.doc.is_object() || !e.doc.contains("model") || !e.doc["model"].is_object()) continue;
      const json& n = e.doc["model"].value("scenario", json());
      if (!n.is_string() || names.count(n.get<std::string>())) continue;
      const std::string file = n.get<std::string>() + ".json";
      for (const fs::path& dir : {fs::path(e.file).parent_path().parent_path(), fs::path(catalogue)}) {
        std::error_code ec;
        if (fs::is_regular_file(dir / file, ec)) {
          twins.push_back((dir / file).string());
          names.insert(n.get<std::string>());
          break;
        }
      }
    }
  files->clear();
  for (const auto& t : twins) files->push_back(t);  // the model's side first, as the report lists it
  for (const auto& e : chosen) files->push_back(e.file);
  return true;
}

}  // namespace racelab::cli
