// The at::RecordFunction callback behind racelab/op_points.h. LibTorch is
// included narrowly: record_function.h only.
#include "racelab/op_points.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <regex>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include <ATen/record_function.h>

#include "racelab/racelab.h"

// Points go through the C ABI (racelab/racelab.h), never the C++ controller, so
// that one callback serves every host: linked into a program, the C ABI is
// racelab::point's own; preloaded (libracelab_op_points_preload.so, preload.cpp),
// it is whatever racelab host is loaded beside it, such as racelab exec's
// preload library. A preloaded copy refers to it weakly: with no host loaded the
// symbols are null and no op is a point.
#ifdef RACELAB_OP_POINTS_PRELOAD
#pragma weak racelab_point
#pragma weak racelab_is_controlled
#endif

namespace racelab {
namespace {

bool host_controls_this_thread() {
#ifdef RACELAB_OP_POINTS_PRELOAD
  if (&racelab_is_controlled == nullptr || &racelab_point == nullptr) return false;
#endif
  return racelab_is_controlled() != 0;
}

// What the live OpPoints asked for. The callback is a plain function pointer,
// so it reaches its state through this global; one OpPoints at a time.
struct State {
  std::regex filter;
  double rate = 1;
  uint64_t seed = 0;
  std::atomic<int64_t> points{0};
  std::mutex mu;                                  // guards matches
  std::unordered_map<std::string, bool> matches;  // op name -> the filter matches it
};
std::atomic<State*> g_state{nullptr};

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
uint64_t fnv1a(const char* s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (; *s != '\0'; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 0x100000001b3ULL;
  return h;
}

bool matches(State& s, const char* name) {
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.matches.find(name);
  if (it == s.matches.end()) it = s.matches.emplace(name, std::regex_match(name, s.filter)).first;
  return it->second;
}

// The n-th entry of this thread into op `name` is kept with probability rate.
// Managed threads are fresh std::threads in every trial, so the counts restart
// with each trial and a replay keeps the same entries.
bool sampled(const State& s, const char* name) {
  if (s.rate >= 1) return true;
  if (s.rate <= 0) return false;
  thread_local std::unordered_map<std::string, uint64_t> entries;
  const uint64_t n = entries[name]++;
  const uint64_t h = mix(s.seed ^ mix(fnv1a(name) ^ mix(n)));
  return static_cast<double>(h >> 11) * 0x1.0p-53 < s.rate;
}

std::unique_ptr<at::ObserverContext> on_op_enter(const at::RecordFunction& fn) {
  // The cheap test first: most ops run on threads no controller schedules.
  if (!host_controls_this_thread()) return nullptr;
  State* s = g_state.load(std::memory_order_acquire);
  const char* name = fn.name();
  if (s == nullptr || name == nullptr || !matches(*s, name) || !sampled(*s, name)) return nullptr;
  s->points.fetch_add(1, std::memory_order_relaxed);
  // No lock is held here: the thread may be paused while others run their ops.
  // The C ABI copies the name, so the point outlives the op's registration.
  racelab_point(name);
  return nullptr;
}

at::CallbackHandle g_handle = 0;

double env_number(const char* var, double fallback) {
  const char* text = std::getenv(var);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text, &end);
  if (errno != 0 || *end != '\0')
    throw std::invalid_argument(std::string(var) + ": found '" + text + "', expected a number");
  return v;
}

}  // namespace

OpPoints::OpPoints(const OpPointOptions& options) {
  if (!(options.rate >= 0 && options.rate <= 1))
    throw std::invalid_argument("op points: rate " + std::to_string(options.rate) + ", expected a number in [0, 1]");
  auto state = std::make_unique<State>();
  try {
    state->filter = std::regex(options.filter, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("op points: filter '" + options.filter + "' is not a regular expression: " + e.what());
  }
  state->rate = options.rate;
  state->seed = options.seed;
  State* expected = nullptr;
  if (!g_state.compare_exchange_strong(expected, state.get(), std::memory_order_acq_rel))
    throw std::logic_error("op points: another racelab::OpPoints is alive");
  state.release();
  g_handle = at::addGlobalCallback(
      at::RecordFunctionCallback(&on_op_enter).needsInputs(false).scopes({at::RecordScope::FUNCTION}));
}

OpPoints::~OpPoints() {
  at::removeCallback(g_handle);
  // Leaked on purpose: a callback that started before removeCallback may still
  // read it. One small State per OpPoints made.
  g_state.store(nullptr, std::memory_order_release);
}

int64_t OpPoints::points() const {
  State* s = g_state.load(std::memory_order_acquire);
  return s == nullptr ? 0 : s->points.load(std::memory_order_relaxed);
}

std::optional<OpPointOptions> OpPoints::options_from_env() {
  const char* filter = std::getenv("RACELAB_OP_POINTS");
  if (filter == nullptr) return std::nullopt;
  OpPointOptions o;
  if (*filter != '\0') o.filter = filter;
  o.rate = env_number("RACELAB_OP_POINTS_RATE", 1.0);
  const double seed = env_number("RACELAB_OP_POINTS_SEED", 0);
  if (seed < 0 || seed != static_cast<double>(static_cast<uint64_t>(seed)))
    throw std::invalid_argument("RACELAB_OP_POINTS_SEED: found " + std::to_string(seed) +
                                ", expected an integer >= 0");
  o.seed = static_cast<uint64_t>(seed);
  return o;
}

}  // namespace racelab
