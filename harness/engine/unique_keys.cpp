#include "engine/unique_keys.h"

#include <cstddef>
#include <iterator>
#include <map>

#include <fmt/format.h>

namespace racelab {
namespace {

using nlohmann::json;

// An iterator over the text that tells how far the parser has read: nlohmann's
// events carry no position, but when it reports a key its lexer has just
// read that key's closing quote.
class TrackingIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackingIterator(const char* p, const char** read_to) : p_(p), read_to_(read_to) {}
  reference operator*() const { return *p_; }
  TrackingIterator& operator++() {
    ++p_;
    *read_to_ = p_;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const TrackingIterator& o) const { return p_ == o.p_; }
  bool operator!=(const TrackingIterator& o) const { return p_ != o.p_; }

 private:
  const char* p_;
  const char** read_to_;
};

// The offset of the opening quote of the string token ending just before `end`.
size_t key_start(const std::string& text, size_t end) {
  if (end < 2) return 0;
  for (size_t i = end - 2; i > 0; --i) {  // end - 1 is the closing quote
    if (text[i] != '"') continue;
    size_t slashes = 0;
    while (i > slashes && text[i - 1 - slashes] == '\\') ++slashes;
    if (slashes % 2 == 0) return i;
  }
  return 0;
}

TextPosition position_of(const std::string& text, size_t offset) {
  TextPosition p{1, 1};
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

struct Frame {
  bool array = false;
  size_t index = 0;                   // array: the element being read
  std::string key;                    // object: the key being read
  std::map<std::string, size_t> seen;  // object: key -> offset of its first quote
};

}  // namespace

ParsedJson parse_json_finding_duplicates(const std::string& text) {
  ParsedJson out;
  std::vector<Frame> frames;
  const char* read_to = text.data();
  auto path = [&frames]() {
    std::string p = "$";
    for (const Frame& f : frames) p += f.array ? "[" + std::to_string(f.index) + "]" : "." + f.key;
    return p;
  };
  auto element_done = [&frames]() {
    if (!frames.empty() && frames.back().array) ++frames.back().index;
  };
  json::parser_callback_t callback = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start: frames.push_back(Frame{}); break;
      case json::parse_event_t::array_start: frames.push_back(Frame{true}); break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames.pop_back();
        element_done();
        break;
      case json::parse_event_t::value: element_done(); break;
      case json::parse_event_t::key: {
        Frame& f = frames.back();
        f.key = parsed.get<std::string>();
        const size_t at = key_start(text, static_cast<size_t>(read_to - text.data()));
        auto [it, fresh] = f.seen.emplace(f.key, at);
        if (!fresh) out.duplicates.push_back({path(), f.key, position_of(text, it->second), position_of(text, at)});
        break;
      }
    }
    return true;
  };
  out.doc = json::parse(TrackingIterator(text.data(), &read_to), TrackingIterator(text.data() + text.size(), &read_to),
                        callback);
  return out;
}

std::string describe(const DuplicateKey& d) {
  return fmt::format("the key \"{}\" twice: line {}, column {} and line {}, column {}", d.key, d.first.line,
                     d.first.column, d.second.line, d.second.column);
}

}  // namespace racelab
