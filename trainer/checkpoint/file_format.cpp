// trainer/checkpoint/file_format.cpp -- see file_format.h. LibTorch-free.
#include "trainer/checkpoint/file_format.h"

#include <cstring>

#include <fmt/format.h>

#include "trainer/util/errors.h"

namespace racelab::trainer::checkpoint {
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

std::string encode_header(const std::string& meta, const std::vector<char>& payload) {
  std::string header(kMagic, 8);
  put<uint32_t>(header, kCheckpointVersion);
  put<uint32_t>(header, 0);
  put<uint64_t>(header, meta.size());
  put<uint64_t>(header, payload.size());
  put<uint64_t>(header, fnv1a(payload.data(), payload.size(), fnv1a(meta.data(), meta.size())));
  return header;
}

bool starts_with_magic(const char* bytes, size_t n) { return n >= 8 && std::memcmp(bytes, kMagic, 8) == 0; }

File decode(const std::vector<char>& bytes, const std::string& path, const std::string& expected_kind) {
  if (bytes.size() < kHeaderSize)
    throw BadInput(fmt::format("checkpoint '{}': truncated: {} bytes, shorter than the {}-byte header", path,
                               bytes.size(), kHeaderSize));
  if (!starts_with_magic(bytes.data(), bytes.size()))
    throw BadInput(fmt::format("checkpoint '{}': not a racelab checkpoint (bad magic)", path));
  auto version = get<uint32_t>(bytes, 8);
  if (version != kCheckpointVersion)
    throw BadInput(fmt::format("checkpoint '{}': format version {} , this racelab reads version {}", path, version,
                               kCheckpointVersion));
  auto meta_len = get<uint64_t>(bytes, 16), payload_len = get<uint64_t>(bytes, 24), sum = get<uint64_t>(bytes, 32);
  // Each length alone is bounded by the file, so the sum cannot wrap.
  if (meta_len > bytes.size() || payload_len > bytes.size() || bytes.size() != kHeaderSize + meta_len + payload_len)
    throw BadInput(fmt::format("checkpoint '{}': truncated or padded: header promises {} bytes, file has {}", path,
                               meta_len > bytes.size() || payload_len > bytes.size()
                                   ? std::string("more than that")
                                   : std::to_string(kHeaderSize + meta_len + payload_len),
                               bytes.size()));
  const char* meta_p = bytes.data() + kHeaderSize;
  if (fnv1a(meta_p + meta_len, payload_len, fnv1a(meta_p, meta_len)) != sum)
    throw BadInput(fmt::format("checkpoint '{}': corrupt: checksum mismatch", path));
  File f;
  try {
    f.meta = nlohmann::json::parse(meta_p, meta_p + meta_len);
  } catch (const std::exception& e) {
    throw BadInput(fmt::format("checkpoint '{}': corrupt metadata: {}", path, e.what()));
  }
  const nlohmann::json& kind = f.meta.is_object() && f.meta.contains("kind") ? f.meta["kind"] : nlohmann::json();
  if (!kind.is_string() || kind.get<std::string>() != expected_kind)
    throw BadInput(fmt::format("checkpoint '{}': holds a '{}' checkpoint, expected '{}'", path,
                               kind.is_string() ? kind.get<std::string>() : kind.dump(), expected_kind));
  f.payload.assign(meta_p + meta_len, meta_p + meta_len + payload_len);
  return f;
}

}  // namespace racelab::trainer::checkpoint
