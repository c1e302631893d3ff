// cli/bench/memory.cpp -- what memory-access points cost (see bench.h), on one
// two-thread C program (memory_target.c) built twice: with the points
// (racelab_memory_target, racelab_instrument_memory) and plainly
// (racelab_memory_target_plain). Each figure is the instrumented build over
// the plain one, measured by the program itself around its threads' loops:
//  - native: no racelab at all (the runtime finds no racelab and returns);
//  - loaded: under `racelab exec -s os`, the preload library loaded but not
//    scheduling (every shared access calls into it and returns);
//  - controlled: under `racelab exec -s random`, every shared access a step.
// The controlled cells also give the steps per trial: the instrumented build
// adds two per iteration (the shared slot's read and write), none for the 17
// stack and thread-local accesses the runtime filters out.
#include "cli/bench/bench.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace racelab::cli::bench {

json bench_memory(const Options& o) {
  json out;
  const std::string instrumented = bench_program("racelab_memory_target");
  const std::string plain = bench_program("racelab_memory_target_plain");
  for (const std::string& p : {instrumented, plain})
    if (::access(p.c_str(), X_OK) != 0) {
      out["skipped"] = p + " not found (it is built with racelab, except in a ThreadSanitizer build)";
      return out;
    }
  const std::string file = fmt::format("/tmp/racelab-bench-memory-{}.txt", ::getpid());
  auto native = [&](const std::string& program, long iters) {
    const std::string cmd = fmt::format("'{}' {} '{}'", program, iters, file);
    std::vector<double> v;
    for (int i = 0; i < o.repeats; ++i)
      if (std::system(cmd.c_str()) == 0) v.push_back(read_ns(file));
    return median(v);
  };
  struct Under {
    double ns;
    int64_t steps;
    double trial_ms;
  };
  auto under = [&](const std::string& program, long iters, const std::string& strategy) {
    CellRun r = exec_cell({program, std::to_string(iters), file}, true, strategy, o.repeats);
    std::vector<double> ms;
    for (const auto& t : r.records) ms.push_back(t.wall_ms);
    return Under{read_ns(file), r.records.empty() ? 0 : r.records.back().steps, median(ms)};
  };
  auto ratio = [](double a, double b) { return a / std::max(1e-9, b); };

  const long free_iters = o.quick ? 20000 : 1000000, controlled_iters = o.quick ? 100 : 1000;
  const double native_i = native(instrumented, free_iters), native_p = native(plain, free_iters);
  out["native"] = {{"iterations_per_thread", free_iters},
                   {"instrumented_ns", native_i},
                   {"plain_ns", native_p},
                   {"instrumented_over_plain", ratio(native_i, native_p)}};
  const Under loaded_i = under(instrumented, free_iters, "os"), loaded_p = under(plain, free_iters, "os");
  out["loaded"] = {{"iterations_per_thread", free_iters},
                   {"instrumented_ns", loaded_i.ns},
                   {"plain_ns", loaded_p.ns},
                   {"instrumented_over_plain", ratio(loaded_i.ns, loaded_p.ns)},
                   {"instrumented_over_native_plain", ratio(loaded_i.ns, native_p)}};
  const Under ctl_i = under(instrumented, controlled_iters, "random");
  const Under ctl_p = under(plain, controlled_iters, "random");
  const double memory_steps = static_cast<double>(ctl_i.steps - ctl_p.steps);
  out["controlled"] = {
      {"iterations_per_thread", controlled_iters},
      {"instrumented_ns", ctl_i.ns},
      {"plain_ns", ctl_p.ns},
      {"instrumented_over_plain", ratio(ctl_i.ns, ctl_p.ns)},
      {"steps_instrumented", ctl_i.steps},
      {"steps_plain", ctl_p.steps},
      // 2.0 when the runtime filters the stack and thread-local accesses; ~19 if not.
      {"memory_points_per_iteration", memory_steps / static_cast<double>(2 * controlled_iters)},
      {"trial_ms_instrumented", ctl_i.trial_ms},
      {"trial_ms_plain", ctl_p.trial_ms},
      {"ns_per_memory_point", memory_steps > 0 ? (ctl_i.trial_ms - ctl_p.trial_ms) * 1e6 / memory_steps : 0.0}};
  std::remove(file.c_str());
  return out;
}

}  // namespace racelab::cli::bench
