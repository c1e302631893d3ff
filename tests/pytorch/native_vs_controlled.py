"""Native against controlled: every outcome class a script shows under racelab must be one it
has natively, unless the trial names why it can happen -- a known race (the 'racy' twins), or
a timeout that expired (the detail's '[timeout expired ...]').

  python3 native_vs_controlled.py --racelab RACELAB --python "PY CMD" [-n N] [-s S1,S2] SCRIPT...

Each SCRIPT runs N times natively (`PY CMD SCRIPT VARIANT`) and N times under each strategy
(`racelab pyrun`), for the variants 'correct' and 'racy'. Prints a Markdown table, one row per
script, variant and strategy, and exits 1 when a class seen only under control is unexplained.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile


def native_class(python, script, variant):
    p = subprocess.run(shlex.split(python) + [script, variant], capture_output=True, text=True)
    if p.returncode == 0:
        return "holds"
    return "crash" if p.returncode < 0 else "error"


def controlled(racelab, python, script, variant, strategy, n, seed):
    with tempfile.TemporaryDirectory() as d:
        results = os.path.join(d, "results.jsonl")
        cmd = [racelab, "pyrun", "--python", python, "-n", str(n), "-s", strategy, "--seed", str(seed), "-q",
               "--timeout", "240", "--results", results, "--", script, variant]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode not in (0, 1):
            raise SystemExit(f"racelab exited {p.returncode}: {' '.join(cmd)}\n{p.stdout}{p.stderr}")
        rows = []
        with open(results) as f:
            for line in f:
                r = json.loads(line)
                if "outcome" in r:
                    rows.append((r["outcome"], r.get("detail", "")))
        return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--racelab", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("-n", type=int, default=5)
    ap.add_argument("-s", default="os,random,pct:3,pos,surw,auto+os")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--variants", default="correct,racy")
    ap.add_argument("scripts", nargs="+")
    a = ap.parse_args()
    unexplained = []
    print("| script | variant | native classes | strategy | controlled classes | only under control |")
    print("|---|---|---|---|---|---|")
    for script in a.scripts:
        name = os.path.basename(script)
        for variant in a.variants.split(","):
            native = {}
            for _ in range(a.n):
                c = native_class(a.python, script, variant)
                native[c] = native.get(c, 0) + 1
            for strategy in a.s.split(","):
                seen, only = {}, []
                for outcome, detail in controlled(a.racelab, a.python, script, variant, strategy, a.n, a.seed):
                    seen[outcome] = seen.get(outcome, 0) + 1
                    if outcome not in native:
                        why = ("known race" if variant == "racy" else
                               "timeout named" if "[timeout expired" in detail else "")
                        only.append(f"{outcome} ({why or 'UNEXPLAINED'})")
                        if not why:
                            unexplained.append(f"{name} {variant} {strategy}: {outcome}: {detail[:300]}")
                fmt = lambda d: ", ".join(f"{k} {v}/{a.n}" for k, v in sorted(d.items()))
                print(f"| {name} | {variant} | {fmt(native)} | {strategy} | {fmt(seen)} | "
                      f"{'; '.join(sorted(set(only))) or '-'} |", flush=True)
    for u in unexplained:
        print("unexplained:", u)
    print(f"native_vs_controlled: {len(unexplained)} unexplained class(es)")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
