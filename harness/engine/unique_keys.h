// engine/unique_keys.h -- JSON text to a document, finding every key
// an object has twice.
//
// JSON leaves duplicate keys to the reader, and nlohmann's keeps the last
// one silently: a scenario that says "trials" twice would run the second
// value while its author reads the first, and a schedule that says "thread"
// twice would replay another thread than the one its reader sees. So scenario
// files (campaign/scenario.cpp) and schedule files (engine/schedule.cpp) are
// parsed here, and each repeated key is reported with both of its places.
#ifndef RACELAB_ENGINE_UNIQUE_KEYS_H_
#define RACELAB_ENGINE_UNIQUE_KEYS_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace racelab {

// Where a key's opening quote is in the text, 1-based (columns count bytes).
struct TextPosition {
  size_t line = 0, column = 0;
};

struct DuplicateKey {
  std::string path;    // the JSON path of the repeated key: "$.strategies[0].trials"
  std::string key;
  TextPosition first, second;
};

struct ParsedJson {
  nlohmann::json doc;                     // as nlohmann parses it (the last of duplicate keys wins)
  std::vector<DuplicateKey> duplicates;   // in text order
};

// Throws nlohmann::json::exception for text that is not JSON nlohmann can
// hold: a parse_error, or an out_of_range for a number beyond a double
// (1e999999).
ParsedJson parse_json_finding_duplicates(const std::string& text);

// How every reader names a repeated key: "the key \"trials\" twice: line 3,
// column 5 and line 9, column 5".
std::string describe(const DuplicateKey& d);

// What every reader expects instead, for its error message.
inline constexpr const char* kEachKeyOnce = "each key once (JSON keeps only the last, silently)";

}  // namespace racelab

#endif  // RACELAB_ENGINE_UNIQUE_KEYS_H_
