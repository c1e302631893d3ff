#include "trainer/checkpoint/checkpoint.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include "racelab/atomic_file.h"
#include "trainer/util/errors.h"

namespace trainer::checkpoint {
namespace {

constexpr char kMagic[8] = {'R', 'L', 'C', 'K', 'P', 'T', '\r', '\n'};
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8 + 8 + 8;

uint64_t fnv1a(const char* data, size_t n, uint64_t h = 1469598103934665603ULL) {
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<uint8_t>(data[i]);
    h *= 1099511628211ULL;
  }
  return h;
}

template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
template <class T>
T get(const std::vector<char>& in, size_t off) {
  T v;
  std::memcpy(&v, in.data() + off, sizeof v);
  return v;
}

}  // namespace

void write(const std::string& path, const File& file) {
  auto meta = file.meta.dump();
  std::string header(kMagic, 8);
  put<uint32_t>(header, kCheckpointVersion);
  put<uint32_t>(header, 0);
  put<uint64_t>(header, meta.size());
  put<uint64_t>(header, file.payload.size());
  put<uint64_t>(header, fnv1a(file.payload.data(), file.payload.size(), fnv1a(meta.data(), meta.size())));

  try {
    racelab::write_file_atomically(path, {header, meta, std::string_view(file.payload.data(), file.payload.size())});
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format("checkpoint '{}': {}", path, e.what()));
  }
}

bool has_magic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char m[8] = {};
  return in.read(m, 8) && std::memcmp(m, kMagic, 8) == 0;
}

File read(const std::string& path, const std::string& expected_kind) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput(fmt::format("checkpoint '{}': cannot open for reading", path));
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < kHeaderSize)
    throw BadInput(fmt::format("checkpoint '{}': truncated: {} bytes, shorter than the {}-byte header", path,
                               bytes.size(), kHeaderSize));
  if (std::memcmp(bytes.data(), kMagic, 8) != 0)
    throw BadInput(fmt::format("checkpoint '{}': not a racelab checkpoint (bad magic)", path));
  auto version = get<uint32_t>(bytes, 8);
  if (version != kCheckpointVersion)
    throw BadInput(fmt::format("checkpoint '{}': format version {} , this racelab reads version {}", path, version,
                               kCheckpointVersion));
  auto meta_len = get<uint64_t>(bytes, 16), payload_len = get<uint64_t>(bytes, 24), sum = get<uint64_t>(bytes, 32);
  uint64_t expected_size = kHeaderSize + meta_len + payload_len;
  if (meta_len > bytes.size() || payload_len > bytes.size() || bytes.size() != expected_size)
    throw BadInput(fmt::format("checkpoint '{}': truncated or padded: header promises {} bytes, file has {}", path,
                               expected_size, bytes.size()));
  const char* meta_p = bytes.data() + kHeaderSize;
  if (fnv1a(meta_p + meta_len, payload_len, fnv1a(meta_p, meta_len)) != sum)
    throw BadInput(fmt::format("checkpoint '{}': corrupt: checksum mismatch", path));
  File f;
  try {
    f.meta = nlohmann::json::parse(meta_p, meta_p + meta_len);
  } catch (const std::exception& e) {
    throw BadInput(fmt::format("checkpoint '{}': corrupt metadata: {}", path, e.what()));
  }
  auto kind = f.meta.value("kind", std::string());
  if (kind != expected_kind)
    throw BadInput(fmt::format("checkpoint '{}': holds a '{}' checkpoint, expected '{}'", path, kind, expected_kind));
  f.payload.assign(meta_p + meta_len, meta_p + meta_len + payload_len);
  return f;
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
  for (auto& [k, v] : tensors) dict.insert(k, v.detach());
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

}  // namespace trainer::checkpoint
