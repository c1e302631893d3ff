#include "trainer/checkpoint/checkpoint.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include "racelab/atomic_file.h"
#include "racelab/file_error.h"
#include "trainer/util/errors.h"

namespace racelab::trainer::checkpoint {

void write(const std::string& path, const File& file) {
  const auto meta = file.meta.dump();
  const std::string header = encode_header(meta, file.payload);
  try {
    racelab::write_file_atomically(path, {header, meta, std::string_view(file.payload.data(), file.payload.size())});
  } catch (const racelab::FileError& e) {
    throw racelab::FileError(fmt::format("checkpoint '{}': {}", path, e.what()));
  }
}

bool has_magic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char m[8] = {};
  return in.read(m, 8) && starts_with_magic(m, 8);
}

File read(const std::string& path, const std::string& expected_kind) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput(fmt::format("checkpoint '{}': cannot open for reading", path));
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw BadInput(fmt::format("checkpoint '{}': cannot read (a directory?)", path));
  return decode(bytes, path, expected_kind);
}

void require_match(const std::string& path, const std::string& what, const nlohmann::json& in_file,
                   const nlohmann::json& expected) {
  for (auto it = expected.begin(); it != expected.end(); ++it) {
    auto found = in_file.contains(it.key()) ? in_file.at(it.key()).dump() : std::string("(absent)");
    if (found != it.value().dump())
      throw BadInput(fmt::format("checkpoint '{}': written for a different {}: '{}' is {} in the checkpoint, {} in this run",
                                 path, what, it.key(), found, it.value().dump()));
  }
}

std::vector<char> save_tensors(const std::map<std::string, at::Tensor>& tensors) {
  c10::Dict<std::string, at::Tensor> dict;
  // CPU copies: a checkpoint written on a GPU loads anywhere (trainer/util/device.h).
  for (auto& [k, v] : tensors) dict.insert(k, v.detach().cpu());
  return torch::jit::pickle_save(c10::IValue(dict));
}

std::map<std::string, at::Tensor> load_tensors(const std::vector<char>& bytes, const std::string& what) {
  std::map<std::string, at::Tensor> out;
  try {
    auto iv = torch::jit::pickle_load(bytes);
    for (auto& entry : iv.toGenericDict()) out[entry.key().toStringRef()] = entry.value().toTensor();
  } catch (const std::exception& e) {
    throw BadInput(fmt::format("{}: payload is not a LibTorch tensor dictionary: {}", what, e.what()));
  }
  return out;
}

at::Tensor bytes_to_tensor(const std::vector<char>& bytes) {
  auto t = at::empty({static_cast<int64_t>(bytes.size())}, at::kByte);
  if (!bytes.empty()) std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return t;
}

std::vector<char> tensor_to_bytes(const at::Tensor& t) {
  auto c = t.contiguous();
  std::vector<char> out(static_cast<size_t>(c.numel()));
  if (!out.empty()) std::memcpy(out.data(), c.data_ptr(), out.size());
  return out;
}

}  // namespace racelab::trainer::checkpoint
