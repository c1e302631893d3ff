// tests/fuzz/fuzz_input.h -- what the fuzz targets share.
//
// A target feeds libFuzzer's bytes to one parser. A parser may refuse input
// only with its documented error type (the one the command line turns into
// exit 3); any other exception escapes, aborts the run and counts as a crash,
// as do the sanitizers' findings.
#ifndef RACELAB_TESTS_FUZZ_FUZZ_INPUT_H_
#define RACELAB_TESTS_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace racelab::fuzz {

inline std::string text(const uint8_t* data, size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

// The bytes as JSON, or discarded (not an error: parsers see only JSON).
inline nlohmann::json json_of(const uint8_t* data, size_t size) {
  return nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
}

}  // namespace racelab::fuzz

#endif  // RACELAB_TESTS_FUZZ_FUZZ_INPUT_H_
