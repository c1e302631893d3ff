// trainer/checkpoint/file_format.h -- the bytes of a checkpoint file, without
// LibTorch: what checkpoint.h reads and writes, and what the fuzzer parses.
//
// Layout (little-endian):
//   8 bytes  magic "RLCKPT\r\n"
//   u32      format version (kCheckpointVersion)
//   u32      reserved (0)
//   u64      meta length,  u64 payload length,  u64 FNV-1a-64 of meta+payload
//   meta     JSON: {"kind": ..., "config": {...}, ...} -- what must match to load
//   payload  LibTorch serialization (torch::pickle_save of a name->tensor dict)
#ifndef TRAINER_CHECKPOINT_FILE_FORMAT_H_
#define TRAINER_CHECKPOINT_FILE_FORMAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace racelab::trainer::checkpoint {

constexpr uint32_t kCheckpointVersion = 1;

struct File {
  nlohmann::json meta;        // must contain "kind"
  std::vector<char> payload;
};

// The header that precedes `meta_text` and `payload` in a file.
std::string encode_header(const std::string& meta_text, const std::vector<char>& payload);

// A whole file's bytes -> its meta and payload. Refuses a truncated, padded,
// corrupt, wrong-version or wrong-kind file with racelab::trainer::BadInput naming
// `path` and what was wrong.
File decode(const std::vector<char>& bytes, const std::string& path, const std::string& expected_kind);

// True when `bytes` start with the racelab checkpoint magic.
bool starts_with_magic(const char* bytes, size_t n);

}  // namespace racelab::trainer::checkpoint

#endif  // TRAINER_CHECKPOINT_FILE_FORMAT_H_
