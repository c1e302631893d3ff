// trainer/checkpoint/checkpoint.h -- versioned, checksummed checkpoint files.
//
// Layout: trainer/checkpoint/file_format.h (magic, version, lengths,
// checksum, JSON meta, LibTorch payload).
// Files are written to `path.tmp`, flushed, fsync'ed and renamed, so a reader
// never sees a half-written checkpoint and a crash keeps the previous one.
// Every refusal is racelab::trainer::BadInput naming the file and what was wrong.
#ifndef TRAINER_CHECKPOINT_CHECKPOINT_H_
#define TRAINER_CHECKPOINT_CHECKPOINT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "trainer/checkpoint/file_format.h"

namespace racelab::trainer::checkpoint {

void write(const std::string& path, const File& file);
// Refuses a missing, truncated, corrupt, wrong-version or wrong-kind file.
File read(const std::string& path, const std::string& expected_kind);
// True when the file starts with the racelab checkpoint magic.
bool has_magic(const std::string& path);

// Throws BadInput "<path>: checkpoint was written for a different <what>:
// '<key>' is X in the checkpoint, Y in this run" for the first differing key.
void require_match(const std::string& path, const std::string& what, const nlohmann::json& in_file,
                   const nlohmann::json& expected);

// LibTorch serialization of named tensors.
std::vector<char> save_tensors(const std::map<std::string, at::Tensor>& tensors);
std::map<std::string, at::Tensor> load_tensors(const std::vector<char>& bytes, const std::string& what);

// Bytes <-> uint8 tensor, to carry opaque blobs (optimizer state) in a payload.
at::Tensor bytes_to_tensor(const std::vector<char>& bytes);
std::vector<char> tensor_to_bytes(const at::Tensor& t);

}  // namespace racelab::trainer::checkpoint

#endif  // TRAINER_CHECKPOINT_CHECKPOINT_H_
