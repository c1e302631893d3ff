#include "engine/strategy.h"

#include <string>

#include "engine/strategies/family.h"

namespace racelab {

using nlohmann::json;

uint64_t mix_seed(uint64_t a, uint64_t b) {
  uint64_t z = a + 0x9e3779b97f4a7c15ULL * (b + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

bool dependent(const Footprint& a, const Footprint& b) {
  if (a.object < 0 || b.object < 0) return true;
  return a.object == b.object && (a.write || b.write);
}

int starved_thread(const ChoiceContext& ctx) {
  if (ctx.fair_steps <= 0 || ctx.waiting_since == nullptr) return -1;
  int best = -1;
  int64_t since = ctx.step - ctx.fair_steps + 1;
  for (int t : *ctx.runnable) {
    if (static_cast<size_t>(t) >= ctx.waiting_since->size()) continue;
    const int64_t w = (*ctx.waiting_since)[t];
    if (w >= 0 && w < since) {
      since = w;
      best = t;
    }
  }
  return best;
}

int default_choice(const ChoiceContext& ctx) {
  if (int t = starved_thread(ctx); t >= 0) return t;
  if (ctx.requester_runnable) return ctx.requester;
  return ctx.runnable->front();
}

namespace {

// "one of random|pct|...": the spec kinds, for messages.
std::string known_kinds() {
  std::string kinds;
  for (const StrategyFamily* f : strategy_families())
    if (f->spec_kind != nullptr) kinds += (kinds.empty() ? "" : "|") + std::string(f->spec_kind);
  return "one of " + kinds;
}

}  // namespace

std::unique_ptr<Strategy> make_strategy(const json& spec, uint64_t seed) {
  if (!spec.is_object() || !spec.contains("kind") || !spec["kind"].is_string())
    bad_spec("kind", known_kinds(), spec.is_object() ? spec.value("kind", json()) : spec);
  const std::string kind = spec["kind"].get<std::string>();
  for (const StrategyFamily* f : strategy_families())
    if (f->spec_kind != nullptr && kind == f->spec_kind) return f->make_strategy(spec, seed);
  bad_spec("kind", known_kinds(), spec["kind"]);
}

}  // namespace racelab
