// cli/bench/report.cpp -- the machine's identity and BENCH.md (see bench.h).
#include "cli/bench/bench.h"
#include "reports/time_split.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

namespace racelab::cli::bench {

json machine() {
  struct utsname u {};
  uname(&u);
  std::ifstream cpu("/proc/cpuinfo");
  std::string line, model;
  while (std::getline(cpu, line))
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  return {{"cpu", model}, {"cores", sysconf(_SC_NPROCESSORS_ONLN)}, {"kernel", u.release},
          {"racelab_version", RACELAB_VERSION}, {"points", RACELAB_POINTS ? "on" : "compiled out"}};
}

// A number of the bench document, read explicitly (nlohmann's implicit conversions are off).
static std::string fmt_num(const json& v, int digits = 2) { return fmt_num(v.get<double>(), digits); }

std::string markdown(const json& b) {
  std::ostringstream md;
  md << "# racelab bench\n\nMachine: " << b["machine"]["cpu"].get<std::string>() << ", "
     << b["machine"]["cores"].get<long>() << " cores. All figures are ratios or rates from one run.\n\n";
  if (b.contains("scheduling")) {
    auto& s = b["scheduling"];
    md << "## Controlled scheduling\n\n| measure | value |\n|---|---|\n"
       << "| scheduling point at which the strategy keeps the running thread | " << fmt_num(s["step"]["keep_ns"], 0)
       << " ns (goal <= 50 ns) |\n"
       << "| scheduling point that switches to the other thread | " << fmt_num(s["step"]["switch_ns"].get<double>() / 1e3, 2)
       << " us (goal <= 2 us) |\n"
       << "| time per scheduling step (ping-pong, 2 threads, random: about half switch) | "
       << fmt_num(s["ping_pong"]["handoff_ns"], 0) << " ns |\n"
       << "| ping-pong trial (nothing but points), controlled / free | " << fmt_num(s["ping_pong"]["controlled_over_free"]) << "x |\n";
    for (std::string wl : {"direct_leak", "stuck_true"})
      md << "| " << wl << ": trials/s controlled / free | " << fmt_num(s[wl]["random"]["trials_per_s"], 0) << " / "
         << fmt_num(s[wl]["os"]["trials_per_s"], 0) << " (controlled/free time " << fmt_num(s[wl]["controlled_over_free"])
         << "x) |\n";
    md << "\n";
  }
  if (b.contains("exec") && b["exec"].contains("trial_rate")) {
    auto& e = b["exec"];
    md << "## racelab exec (a two-thread C program)\n\n| measure | value |\n|---|---|\n"
       << "| trials/s with the fork server / with an exec per trial | "
       << fmt_num(e["trial_rate"]["fork_server"]["trials_per_s"], 0) << " / "
       << fmt_num(e["trial_rate"]["exec_per_trial"]["trials_per_s"], 0) << " ("
       << fmt_num(e["trial_rate"]["fork_server_over_exec"]) << "x) |\n"
       << "| lock/unlock pair controlled / native | " << fmt_num(e["lock_unlock"]["controlled_ns"], 0) << " ns / "
       << fmt_num(e["lock_unlock"]["native_ns"], 0) << " ns (" << fmt_num(e["lock_unlock"]["controlled_over_native"], 0)
       << "x) |\n"
       << "| free running with the preload library loaded / native | "
       << fmt_num(e["free_running"]["preloaded_over_native"]) << "x |\n";
    if (e.contains("start_up") && e["start_up"].contains("exec_ms")) {
      auto& u = e["start_up"];
      md << "| start-up: `racelab exec -n 1 -- /bin/true` / launch of /bin/true | " << fmt_num(u["exec_ms"], 1)
         << " ms / " << fmt_num(u["true_ms"], 2) << " ms (" << fmt_num(u["exec_over_true"], 0) << "x) |\n"
         << "| start-up: `racelab version` / launch of /bin/true | " << fmt_num(u["version_ms"], 1) << " ms ("
         << fmt_num(u["version_over_true"], 0) << "x) |\n";
    }
    md << "\n";
  }
  if (b.contains("memory") && b["memory"].contains("controlled")) {
    auto& m = b["memory"];
    md << "## Memory-access points (a two-thread C program, instrumented / its plain build)\n\n"
       << "| measure | value |\n|---|---|\n"
       << "| native, no racelab | " << fmt_num(m["native"]["instrumented_over_plain"]) << "x |\n"
       << "| preload library loaded, not scheduling (os) | " << fmt_num(m["loaded"]["instrumented_over_plain"])
       << "x |\n"
       << "| controlled (random) | " << fmt_num(m["controlled"]["instrumented_over_plain"]) << "x |\n"
       << "| steps per controlled trial, instrumented / plain | " << m["controlled"]["steps_instrumented"].get<long>()
       << " / " << m["controlled"]["steps_plain"].get<long>() << " ("
       << fmt_num(m["controlled"]["memory_points_per_iteration"]) << " memory points per iteration; 2 expected) |\n"
       << "| controlled trial, instrumented / plain | " << fmt_num(m["controlled"]["trial_ms_instrumented"], 1)
       << " ms / " << fmt_num(m["controlled"]["trial_ms_plain"], 1) << " ms |\n"
       << "| cost per memory-access point, controlled | " << fmt_num(m["controlled"]["ns_per_memory_point"], 0)
       << " ns |\n\n";
  }
  if (b.contains("compare")) {
    const json& c = b["compare"];
    if (c.contains("error")) {
      md << "## racelab compare\n\n" << c["error"].get<std::string>() << "\n\n";
    } else {
      md << reports::time_split_markdown(c);
      md << "Budget scale " << fmt_num(c["budget_scale"], 1) << "; expectations: "
         << c["expectations"].value("passed", int64_t{0}) << " of " << c["expectations"].value("total", int64_t{0})
         << " passed (exit " << c["exit_code"].get<int>() << ").\n\n";
    }
  }
  if (b.contains("pytorch")) {
    auto& p = b["pytorch"];
    md << "## Real torch beside the model (direct leak, 2 threads)\n\n";
    if (p.contains("skipped")) {
      md << "Skipped: " << p["skipped"].get<std::string>() << ".\n\n";
    } else {
      md << "torch " << p.value("torch", std::string("unknown")) << ".\n\n| measure | model | real torch | ratio |\n"
         << "|---|---|---|---|\n| trials/s (global_lock, random) | " << fmt_num(p["trial_rate"]["model"]["trials_per_s"], 1)
         << " | " << fmt_num(p["trial_rate"]["pytorch"]["trials_per_s"], 2) << " | model "
         << fmt_num(p["trial_rate"]["model_over_pytorch"], 0) << "x faster |\n";
      for (auto& r : p["trials_to_first_failure"]) {
        auto shown = [&](const json& v) {
          return v.is_null() ? "none in " + std::to_string(r["budget"].get<long>()) : std::to_string(v.get<long>());
        };
        md << "| trials to the first failure, " << r["strategy"].get<std::string>() << " | " << shown(r["model"])
           << " | " << shown(r["pytorch"]) << " | |\n";
      }
      md << "\n";
      if (p.contains("point_overhead")) {
        md << "Per-point cost of the Python points (one managed thread; a point placed as torch's are, and "
              "racelab.bridge.point called directly, each against a plain Python call; best of 3 runs):\n\n"
              "| strategy | plain call | placed point | ratio | bridge.point | ratio |\n|---|---|---|---|---|---|\n";
        for (const char* st : {"random", "os"}) {
          if (!p["point_overhead"].contains(st)) continue;
          const json& x = p["point_overhead"][st];
          if (x.contains("problem")) {
            md << "| " << st << " | " << x["problem"].get<std::string>() << " | | | | |\n";
            continue;
          }
          md << "| " << st << " | " << fmt_num(x["plain_call_ns"], 0) << " ns | " << fmt_num(x["point_call_ns"], 0)
             << " ns | " << fmt_num(x["point_over_plain"], 0) << "x | " << fmt_num(x["bridge_point_ns"], 0) << " ns | "
             << fmt_num(x["bridge_over_plain"], 0) << "x |\n";
        }
        md << "\n";
      }
      if (p.contains("script_trial")) {
        const json& t = p["script_trial"];
        if (t.contains("skipped")) {
          md << "Script trial: skipped: " << t["skipped"].get<std::string>() << ".\n\n";
        } else {
          auto ms = [](const json& v) { return v.is_number() ? fmt_num(v.get<double>(), 0) + " ms" : std::string("-"); };
          md << "Where a script trial's time goes (`racelab pyrun -s random` on `" << t["script"].get<std::string>()
             << "`, " << t["trials"].get<long>() << " trials, " << fmt_num(t["trials_per_s"], 2)
             << " trials/s; means per trial, compile by torch's own timer):\n\n"
                "| part | time |\n|---|---|\n"
             << "| worker start, once (import torch, find the points) | " << ms(t["once_ms"]["startup"]) << " |\n"
             << "| the script's warm-up, once | " << ms(t["once_ms"]["warm_up"]) << " |\n"
             << "| reset (dynamo's caches) | " << ms(t["per_trial_ms"]["reset"]) << " |\n"
             << "| the script's body | " << ms(t["per_trial_ms"]["body"]) << " |\n"
             << "| of it, dynamo compiling | " << ms(t["per_trial_ms"]["compile"]) << " |\n"
             << "| the trial's end (classes, stacks) | " << ms(t["per_trial_ms"]["end"]) << " |\n"
             << "| scheduling steps, point hits | " << t["steps_per_trial"].get<long>() << ", "
             << t["point_hits_per_trial"].get<long>() << " |\n\n";
        }
      }
    }
  }
  if (b.contains("reproduce")) {
    md << "## Time to reproduce (mitigation none, 2 threads)\n\n"
          "| race | strategy | failed / trials | p (95% CI) | median trials to failure | median ms to failure |\n"
          "|---|---|---|---|---|---|\n";
    for (auto& r : b["reproduce"])
      md << "| " << r["race"].get<std::string>() << " | " << r["strategy"].get<std::string>() << " | "
         << r["failures"].get<long>() << " / " << r["trials"].get<long>() << " | " << fmt_num(r["p"]) << " ("
         << fmt_num(r["p_low"]) << "-" << fmt_num(r["p_high"]) << ") | "
         << (r["median_trials_to_failure"].is_null() ? "> " + std::to_string(r["trials"].get<long>())
                                                     : fmt_num(r["median_trials_to_failure"], 1))
         << " | " << (r["median_ms_to_failure"].is_null() ? "-" : fmt_num(r["median_ms_to_failure"], 1)) << " |\n";
    md << "\n";
  }
  if (b.contains("fallback")) {
    auto& f = b["fallback"];
    md << "## Silent-fallback cost per attention call (forward + backward)\n\n| path | us per call | ratio to compiled |\n|---|---|---|\n"
       << "| compiled (cache hit, graph executor) | " << fmt_num(f["compiled_us"], 1) << " | 1.00 |\n"
       << "| silent eager fallback (disable_check, flag set by another capture) | " << fmt_num(f["silent_fallback_us"], 1)
       << " | " << fmt_num(f["fallback_over_compiled"]) << " |\n"
       << "| eager path after the recompile limit (compiles every call) | " << fmt_num(f["eager_path_us"], 1) << " | "
       << fmt_num(f["eager_path_over_compiled"]) << " |\n\n"
       << "Median of " << f["rounds"].get<int>() << " alternating rounds of " << f["calls"].get<long>()
       << " calls; spread across rounds " << fmt_num(100 * f["noise"].get<double>(), 0) << "%.\n\n";
  }
  if (b.contains("mitigations")) {
    md << "## Mitigation cost on the real trainer (ideal = isolate_thread)\n\n"
          "| mitigation | N | steps/s | ratio to ideal | noise | compile s | peak RSS MB | fallbacks / calls | errored |\n"
          "|---|---|---|---|---|---|---|---|---|\n";
    for (auto& r : b["mitigations"])
      md << "| " << r["mitigation"].get<std::string>() << " | " << r["workers"].get<int>() << " | "
         << fmt_num(r["steps_per_s"]) << " | " << fmt_num(r["ratio_to_ideal"]) << " | " << fmt_num(r["noise"]) << " | "
         << fmt_num(r["compile_s"], 3) << " | " << fmt_num(r["peak_rss_mb"], 0) << " | " << r["fallbacks"].get<long>()
         << " / " << r["attention_calls"].get<long>() << " | " << r["errored_trials"].get<long>() << " |\n";
    md << "\n";
  }
  if (b.contains("scaling")) {
    md << "## Worker scaling (isolate_thread)\n\n| N | steps/s | ratio to linear |\n|---|---|---|\n";
    for (auto& r : b["scaling"])
      md << "| " << r["workers"].get<int>() << " | " << fmt_num(r["steps_per_s"]) << " | "
         << fmt_num(r["ratio_to_linear"]) << " |\n";
    md << "\n";
  }
  if (b.contains("search")) {
    const json& s = b["search"];
    const long budget = s["budget"].get<long>();
    md << "## Search strength on the hard-bug catalogue\n\n"
       << "Each strategy on each hard-bug workload, " << s["seeds"].get<long>()
       << " seeds, at most " << budget << " trials per seed, stopping at the first failure. "
          "Found: seeds whose cell failed; trials to the first failure over all seeds (a miss counts as more "
          "than the budget).\n\n"
          "| workload | strategy | found | median trials | p90 trials | schedules/s |\n|---|---|---|---|---|---|\n";
    auto trials = [&](const json& v) { return v.is_null() ? "> " + std::to_string(budget) : fmt_num(v, 0); };
    for (auto& r : s["rows"])
      md << "| " << r["workload"].get<std::string>() << " | " << r["strategy"].get<std::string>() << " | "
         << r["found"].get<long>() << "/" << r["seeds"].get<long>()
         << (r["deterministic"].get<bool>() ? " (no coin flips: one run)" : "") << " | " << trials(r["median_trials"])
         << " | " << trials(r["p90_trials"]) << " | " << fmt_num(r["schedules_per_s"], 0) << " |\n";
    md << "\n";
  }
  if (b.contains("comparison")) {
    md << "## Compared with " << b["comparison"]["old"].get<std::string>() << "\n\n| metric | old | new | change | noise | verdict |\n|---|---|---|---|---|---|\n";
    for (auto& r : b["comparison"]["rows"])
      md << "| " << r["metric"].get<std::string>() << " | " << fmt_num(r["old"]) << " | " << fmt_num(r["new"]) << " | "
         << fmt_num(100 * r["change"].get<double>(), 1) << "% | " << fmt_num(100 * r["noise"].get<double>(), 1) << "% | "
         << r["verdict"].get<std::string>() << " |\n";
  }
  return md.str();
}

// Higher-is-better metrics with the noise measured for them.

}  // namespace racelab::cli::bench
