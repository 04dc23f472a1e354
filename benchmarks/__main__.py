"""``python -m benchmarks [--only NAME] [--no-peers] [--no-paper] [--out FILE]``: time every registry
entry with a ``bench_T`` (all runs at once against one run at a time), then UCB1 beside MABWiser and
beside a minimal compiled loop (:mod:`benchmarks.peers`), then CCLB's kernel against the numpy path
on notebook cclb/04's paper batch (:mod:`benchmarks.cclb_paper`), all in one run."""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

from causalbandits_lib.book.chapters import registry_entries
from causalbandits_lib.book.paths import book_root
from causalbandits_lib.book.provenance import package_versions
from causalbandits_lib.book.records import atomic_write_text

from .cclb_paper import TARGET as CCLB_TARGET
from .cclb_paper import run_cclb_paper
from .harness import run_entry
from .memory import run_memory
from .paper_work import NUMPY_LIMIT, paper_work
from .peers import check_targets, run_peers


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--only", help="run only entries whose name contains this text")
    parser.add_argument("--out", default="_build/bench.json", help="JSON file for the results [%(default)s]")
    parser.add_argument(
        "--repeat", type=int, default=5, help="interleaved timing repetitions (median and range kept) [%(default)s]"
    )
    parser.add_argument("--no-peers", action="store_true", help="skip UCB1 against MABWiser and the compiled limit")
    parser.add_argument("--no-paper", action="store_true", help="skip CCLB at the paper's configuration (~3 min)")
    parser.add_argument("--cclb-horizon", type=int, help="rounds of the CCLB paper batch [the paper's, 10000]")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory row (UCB1, 1,000 x 100,000)")
    args = parser.parse_args(argv)
    entries = [e for e in registry_entries() if e.bench_T is not None and (not args.only or args.only in e.name)]
    if not entries:
        print(f"no benchmarked registry entry matches {args.only!r}", file=sys.stderr)
        return 2
    header = f"{'case':34s} {'runs':>5s} {'T':>7s} {'vectorised steps/s':>19s} {'loop steps/s':>13s} {'ratio':>7s}"
    print("numpy path: all runs at once (vectorised) against one run at a time (loop); compiled kernels beside it")
    print(header + "  identical  compiled steps/s  kernel/numpy")
    results, failures = [], []
    for entry in entries:
        rows = run_entry(entry, repeat=args.repeat)
        for r in rows:
            print(
                f"{r['case']:34s} {r['n_runs']:5d} {r['T']:7d} {r['vectorised_steps_per_second']:19,.0f} "
                f"{r['loop_steps_per_second']:13,.0f} {r['ratio']:7.1f}  {'yes' if r['identical'] else 'NO '}"
                + (
                    f"  {r['compiled_steps_per_second']:16,.0f}  {r['kernel_speedup']:11.1f}x"
                    if "kernel_speedup" in r
                    else ""
                )
            )
        results.extend(rows)
        for r in rows:
            if not r["identical"]:
                print(f"  NOT IDENTICAL: {entry.name} at {r['n_runs']} runs (all runs at once vs one at a time)")
                failures.append(f"{entry.name} (runs not independent at {r['n_runs']} runs)")
        if entry.target_ratio is not None:
            top = rows[-1]
            ok = top["ratio"] >= entry.target_ratio
            verdict = "met" if ok else "NOT MET"
            print(f"  target: >= {entry.target_ratio:g}x at {top['n_runs']} runs: {verdict} ({top['ratio']:.1f}x)")
            if not ok:
                failures.append(entry.name)
    peers = []
    if not args.no_peers and not args.only:
        print("\nUCB1 against a peer library and the practical limit (run-steps per second):")
        peers = run_peers(repeat=args.repeat)
        for r in peers:
            mab = r.get("mabwiser_steps_per_second")
            print(
                f"  {r['problem']}, {r['runs']} runs: project {r['project_compiled_steps_per_second']:,.0f} "
                f"(numpy path {r['project_numpy_steps_per_second']:,.0f}), limit {r['limit_steps_per_second']:,.0f}, "
                + (f"MABWiser {mab:,.0f}" if mab else "MABWiser not installed")
            )
            ratio = f"{r['project_over_mabwiser']:.0f}x MABWiser" if mab else "no MABWiser ratio"
            print(f"    limit/project {r['limit_over_project']:.2f}, project {ratio}")
        missed = check_targets(peers)
        for m in missed:
            print(f"  target NOT MET: {m}")
        failures.extend(missed)
    paper = None
    if not args.no_paper and not args.only:
        print("\nCCLB's kernel at the paper's configuration (notebook cclb/04's batch, run-steps per second):")
        paper = run_cclb_paper(args.cclb_horizon)
        print(
            f"  {paper['configurations']} configurations x {paper['replications']} replications = "
            f"{paper['n_runs']} runs, T = {paper['T']:,}: numpy path {paper['numpy_steps_per_second']:,.0f}, "
            f"kernel {paper['compiled_steps_per_second']:,.0f}, kernel/numpy {paper['kernel_speedup']:.1f}x"
        )
        if paper["same_decisions"]:
            print("  decisions identical in every run and round")
        else:
            print(
                f"  decisions differ in {paper['runs_with_different_decisions']} of {paper['n_runs']} runs, "
                f"from round {paper['first_different_round']} (a near-tie broken the other way; see cclb/kernels.py)"
            )
        ok = paper["kernel_speedup"] >= CCLB_TARGET
        print(f"  target: >= {CCLB_TARGET:g}x: {'met' if ok else 'NOT MET'}")
        if not ok:
            failures.append("cclb paper batch (kernel/numpy below the target)")
    memory = None
    if not args.no_memory and not args.only:
        memory = run_memory()
        print(
            f"\nPeak memory, {memory['case']}: {memory['peak_mb']:.0f} MB ({memory['after_imports_mb']:.0f} MB after "
            f"the imports; {memory['seconds']:.1f} s on the {memory['backend']} path; kept per round: "
            f"{memory['kept_per_round'] or 'nothing'}, running sums at {memory['checkpoints']} checkpoints); "
            f"target < {memory['target_mb']:.0f} MB: {'met' if memory['met'] else 'NOT MET'}"
        )
        if not memory["met"]:
            failures.append("peak memory of the default long simulation")
    work = paper_work(book_root() / "results" / "paper")
    print(f"\nWhere the paper profile's time goes (committed records, {work['book_seconds']:.0f} s of notebooks):")
    print(
        f"  {'notebook':32s} {'environment':26s} {'policy':34s} {'path':8s} {'seconds':>8s} {'of nb':>6s} "
        f"{'of book':>7s}"
    )
    for r in work["rows"]:
        print(
            f"  {r['notebook']:32s} {r['environment']:26s} {r['policy'][:34]:34s} {r['backend']:8s} "
            f"{r['seconds']:8.1f} {r['share_of_notebook']:6.0%} {r['share_of_book']:7.1%}"
        )
    if work["without_ledger"]:
        print(f"  records without the ledger (re-run them): {', '.join(work['without_ledger'])}")
    for r in work["numpy_over_limit"]:
        print(f"  on the numpy path above {NUMPY_LIMIT:g} s: {r['notebook']}: {r['environment']} x {r['policy']}")
    payload = {
        "results": results,
        "memory": memory,
        "paper_work": work,
        "peers": peers,
        "cclb_paper": paper,
        "platform": {"machine": platform.machine(), "cpus": os.cpu_count(), "python": platform.python_version()},
        "versions": package_versions(),
        "failures": failures,
    }
    out = Path(args.out)
    atomic_write_text(out, json.dumps(payload, indent=1) + "\n")
    print(f"results written to {out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
