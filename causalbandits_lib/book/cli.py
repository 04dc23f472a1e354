"""The ``causalbandits`` command: list, run, sweep, sensitivity, collect, report, cite, diff, rejudge
and verify.

Exit codes: 0 success (for ``diff``, ``rejudge`` and ``verify``: the results are identical); 2 bad
arguments or parameters (nothing was executed); 1 a notebook failed, a record is invalid, or
``diff``, ``rejudge`` or ``verify`` found differences;
130 interrupted (Ctrl-C, SIGINT), 143 terminated (SIGTERM). Every error ends in one line
``causalbandits: error: ...`` naming the thing, the value and what is allowed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from . import paths
from .params import ParameterError, SpecError
from .records import RecordError

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


def _err(msg: str) -> None:
    print(f"causalbandits: error: {msg}", file=sys.stderr)


def _check_not_a_file(path: Path, option: str) -> None:
    for parent in [path.absolute(), *path.absolute().parents]:
        if parent.exists():
            if not parent.is_dir():
                raise ParameterError(f"{option} {path}: {parent} is a file, not a folder; give a folder")
            return


def writable_folder(path: Path, option: str) -> Path:
    """Check, before anything runs, that ``path`` is (or can be made) a folder this process can
    write in; returns it absolute.

    Raises
    ------
    ParameterError
        Naming the option and the path (exit code 2).
    """
    import tempfile

    path = Path(path).expanduser().absolute()
    _check_not_a_file(path, option)
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise ParameterError(f"{option} {path}: cannot write there ({exc.strerror or exc}); give a writable folder")
    return path


# ---------------------------------------------------------------------------- list
def _record_folders(extra: Sequence[Path] = ()) -> list[Path]:
    """Where ``list`` looks for the records of runs at the smoke and book profiles: the folder a
    notebook writes into (``CAUSALBANDITS_RECORD_DIR`` when set, else ``_build/records/<profile>``),
    ``run``'s and ``sweep``'s default ``--out`` in the working folder, then every ``--records``."""
    import os

    from .notebook import RECORD_DIR_ENV

    folders = [Path(os.environ[RECORD_DIR_ENV])] if os.environ.get(RECORD_DIR_ENV) else []
    folders += [Path("causalbandits-out"), Path("causalbandits-sweep"), *extra]
    return list(dict.fromkeys(folders))


def _measured_times(nb, folders: Sequence[Path] = ()) -> str:
    """What a run of ``nb`` cost at each profile: the paper profile from the committed record, the
    others from the newest record of that profile in ``_build/records/<profile>`` and ``folders``
    (``<chapter>/<notebook>.json`` as ``run`` writes it, ``<chapter>/<notebook>/*/record.json`` as
    ``sweep`` does), preferring a run with the profile's own parameters."""
    import json

    out = []
    for profile in ("smoke", "book", "paper"):
        if profile == "paper":
            candidates = [(paths.paper_results_dir() / nb.chapter / f"{nb.name}.json", "committed record")]
        else:
            candidates = [(paths.default_record_dir(profile) / nb.chapter / f"{nb.name}.json", "last run here")]
            for folder in folders:
                candidates.append((folder / nb.chapter / f"{nb.name}.json", str(folder)))
                candidates += [(p, str(folder)) for p in sorted((folder / nb.chapter / nb.name).glob("*/record.json"))]
        own = nb.resolve({"profile": profile})[0]
        best = None
        for path, where in candidates:
            try:
                rec = json.loads(path.read_text(encoding="utf-8"))
                seconds, started = float(rec["timings"]["wall_seconds"]), str(rec["timings"]["started"])
                if rec["notebook"] != nb.id or rec["profile"] != profile:
                    continue
            except (OSError, ValueError, KeyError, TypeError):
                continue
            rank = (rec.get("parameters") == own, started)
            if best is None or rank > best[0]:
                best = (rank, seconds, where)
        if best is None:
            out.append(f"{profile} not measured in the folders searched")
            continue
        (same, started), seconds, where = best
        other = "" if same else ", other parameters than the profile's"
        out.append(f"{profile} {seconds:.0f} s ({where}, {started[:10]}{other})")
    return "; ".join(out)


def cmd_list(args: argparse.Namespace) -> int:
    from .execution import chapters, resolve_target
    from .params import COMMON

    for folder in args.records or []:
        if not Path(folder).is_dir():
            raise FileNotFoundError(f"list --records {folder}: not a folder; give a folder of records (a run's --out)")
    folders = _record_folders([Path(f) for f in args.records or []])
    all_chapters = chapters()
    targets = (
        resolve_target(args.target, all_chapters)
        if args.target
        else [nb for ch in all_chapters.values() for nb in ch.notebooks.values()]
    )
    current = None
    for nb in targets:
        if nb.chapter != current:
            current = nb.chapter
            print(f"{current}: {all_chapters[current].title}")
        print(f"  {nb.id}  {nb.title}")
        print(f"      time: {_measured_times(nb, folders)}")
        if args.brief:
            continue
        for name, p in nb.all_parameters().items():
            if name in COMMON and not args.all_params:
                continue
            prof = p.profiles
            values = (
                f"{prof['smoke']!r}"
                if len({repr(v) for v in prof.values()}) == 1
                else f"smoke={prof['smoke']!r} book={prof['book']!r} paper={prof['paper']!r}"
            )
            print(f"      {name} ({p.type}): {values}; allowed: {p.allowed()}")
            print(f"          {p.help}")
    if not args.all_params and not args.brief:
        print("every notebook also takes: profile (smoke|book|paper, default book) and seed (integer >= 0, default 0)")
    searched = ", ".join(str(f) for f in [paths.default_record_dir("PROFILE"), *folders])
    print(f"times at smoke and book: the newest record of the profile in {searched}; add --records DIR for others")
    return 0


# ---------------------------------------------------------------------------- run
def cmd_run(args: argparse.Namespace) -> int:
    from .bounds import check_jobs, check_memory
    from .execution import ExecutionError, execute_notebook, parse_assignments, resolve_target

    notebooks = resolve_target(args.target)
    injected = parse_assignments(args.param or [], notebooks, profile=args.profile)  # validates everything first
    check_jobs(args.jobs, args.force)
    if args.timeout is not None and args.timeout <= 0:
        raise ParameterError(
            f"--timeout {args.timeout}: give a positive number of seconds per cell (leave it out for no limit)"
        )
    if args.html:
        from .execution import HTML_MATHJAX, html_mathjax

        if html_mathjax() is None:  # the page's formulas would show as raw TeX offline
            raise ParameterError(
                f"--html: the book's MathJax ({paths.book_root() / HTML_MATHJAX}) is not installed, so the "
                "page's formulas could not render offline; install it with `make mathjax` (needs npm), or leave "
                "out --html"
            )
    at_once = min(args.jobs, len(notebooks))
    for nb in notebooks:
        check_memory(nb.id, nb.resolve(injected[nb.id])[0], at_once=at_once, force=args.force)
    if args.record_dir:
        _check_not_a_file(Path(args.out), "--out")
        record_dir = writable_folder(Path(args.record_dir), "--record-dir")
    out = writable_folder(Path(args.out), "--out")
    record_dir = record_dir if args.record_dir else out
    if args.scheduler:
        from .cluster import describe_scheduler

        if args.retries < 0:
            raise ParameterError(f"--retries {args.retries}: give 0 or more extra attempts per notebook")
        cluster = describe_scheduler(args.scheduler, args.jobs)  # unreachable: one line, exit 2, nothing ran
        return _run_parallel(notebooks, injected, out, record_dir, args, cluster)
    if args.jobs > 1 and len(notebooks) > 1:
        return _run_parallel(notebooks, injected, out, record_dir, args)
    done = []
    for i, nb in enumerate(notebooks, 1):
        shown = ", ".join(f"{k}={v!r}" for k, v in injected[nb.id].items()) or "defaults"
        print(f"[{i}/{len(notebooks)}] {nb.id} ({shown})", flush=True)
        try:
            result = execute_notebook(
                nb,
                injected[nb.id],
                out,
                record_dir,
                progress=None if not args.no_progress else False,
                timeout=args.timeout,
            )
        except ExecutionError as exc:
            from .execution import INTERRUPTED

            if INTERRUPTED.is_set():  # Ctrl-C reached the kernel too: its cell stopped, it did not fail
                raise KeyboardInterrupt from None
            _err(str(exc))
            return EXIT_FAILED
        done.append(result)
        print(
            f"      executed in {result.seconds:.1f} s -> {result.output}\n      record -> {result.record}", flush=True
        )
        _announce_stand_ins(result.record)
        _announce_verdicts(result.record)
        if args.html:
            from .execution import render_html

            print(f"      page -> {render_html(result.output)}", flush=True)
    print(f"{len(done)} notebook(s) executed; records under {record_dir.resolve()}")
    return 0


def _announce_stand_ins(record: Path) -> None:
    """Say on the console when a notebook ran on synthetic stand-in data."""
    from .provenance import stand_ins
    from .records import load_record

    try:
        data = load_record(record)["data"]
    except RecordError:
        return
    for d in data:
        if d.get("name") in stand_ins(data):
            print(
                f"      STAND-IN DATA: {d['name']} was replaced by a synthetic stand-in "
                f"({d.get('reason', 'no reason given')}); "
                "claims about that data set are 'not testable here'",
                flush=True,
            )


def _announce_verdicts(record: Path) -> None:
    """The run's verdict counts and how they compare with the committed paper-scale record."""
    from .verify import run_summary

    try:
        lines = run_summary(record)
    except RecordError as exc:
        lines = [f"cannot compare with the committed paper-scale record: {exc}"]
    for line in lines:
        print(f"      {line}", flush=True)


def _run_parallel(notebooks, injected, out: Path, record_dir: Path, args, cluster=None) -> int:
    """Every notebook as a task of its own on ``args.jobs`` worker processes, or on the Dask
    ``cluster`` (:class:`~causalbandits_lib.book.cluster.ClusterInfo`) of ``--scheduler``; each
    prints when it ends; a failure is reported with its error after the others have finished
    (records of the notebooks that succeeded are written, each atomically). On a cluster a worker
    sends the executed notebook and its record back, and they are written here
    (:func:`~causalbandits_lib.book.execution.write_detached`), never on the worker's disk; a task
    whose worker died is run again elsewhere (``--retries``)."""
    import time

    from ..core.parallel import map_tasks
    from .execution import ExecutionError, execute_by_id, execute_detached, write_detached
    from .sweep import signals_to_this_process_only

    started = time.perf_counter()
    wall = time.time()
    if cluster is None:
        where = dict(out_dir=str(out), record_dir=str(record_dir), timeout=args.timeout)
        tasks = [dict(notebook=nb.id, parameters=injected[nb.id], **where) for nb in notebooks]
        print(f"{len(tasks)} notebooks on {args.jobs} worker processes", flush=True)
    else:
        tasks = [
            dict(
                notebook=nb.id,
                parameters=injected[nb.id],
                timeout=args.timeout,
                shown_as=str(record_dir.resolve() / nb.chapter / f"{nb.name}.json"),
            )
            for nb in notebooks
        ]
        print(f"{len(tasks)} notebook(s) on {cluster.line()}", flush=True)
    finished: list[int] = []

    def report(outcome) -> None:
        nb = notebooks[outcome.index]
        if outcome.ok and cluster is not None:
            try:
                done = write_detached(outcome.result, out, record_dir)
            except ExecutionError as exc:  # a record that is not this notebook's: not written
                outcome.ok, outcome.error = False, str(exc)
            else:
                host = outcome.result.host
                outcome.result = (done.seconds, str(done.output), str(done.record))
        if outcome.ok:
            finished.append(outcome.index)
            seconds, output, record = outcome.result
            on = f" on {host}" if cluster is not None else ""
            print(f"  {nb.id}: executed in {seconds:.1f} s{on} -> {output}\n      record -> {record}", flush=True)
            _announce_stand_ins(Path(record))
            _announce_verdicts(Path(record))
            if args.html:
                from .execution import render_html

                print(f"      page -> {render_html(Path(output))}", flush=True)
        else:
            print(f"  {nb.id}: FAILED", flush=True)

    try:
        # as a sweep's: Ctrl-C and SIGTERM reach this process only, never the workers still importing
        # (a KeyboardInterrupt traceback each) nor their kernels (a cell stopped would read as a failure)
        with signals_to_this_process_only():
            if cluster is None:
                outcomes = map_tasks(execute_by_id, tasks, jobs=args.jobs, retries=0, on_done=report)
            else:
                outcomes = map_tasks(
                    execute_detached,
                    tasks,
                    jobs=args.jobs,
                    scheduler=args.scheduler,
                    retries=args.retries,
                    on_done=report,
                )
    except KeyboardInterrupt:
        # a process pool reports in batches: what counts is the record each notebook has now
        done = [nb.id for i, nb in enumerate(notebooks) if i in finished or _recorded_since(nb, record_dir, wall)]
        print(
            f"run interrupted: {len(done)} notebook(s) finished ({', '.join(done) or 'none'}), "
            f"{len(notebooks) - len(done)} not finished (no partial record)",
            flush=True,
        )
        raise
    failed = [o for o in outcomes if not o.ok]
    for o in failed:
        first = (o.error or "unknown error").strip().splitlines()[0]
        _err(f"{notebooks[o.index].id} failed: {first}")
    ok = len(outcomes) - len(failed)
    print(f"{ok} notebook(s) executed in {time.perf_counter() - started:.1f} s; records under {record_dir.resolve()}")
    return EXIT_FAILED if failed else 0


def _recorded_since(nb, record_dir: Path, since: float) -> bool:
    """Whether ``nb``'s record in ``record_dir`` was written at or after ``since`` (wall clock)."""
    try:
        return (record_dir / nb.chapter / f"{nb.name}.json").stat().st_mtime >= since
    except OSError:
        return False


# ---------------------------------------------------------------------------- report
def cmd_report(args: argparse.Namespace) -> int:
    from .execution import chapters
    from .report import generated_pages, write_reproducibility

    results = Path(args.results) if args.results else paths.paper_results_dir()
    page = Path(args.page) if args.page else paths.book_root() / "book" / "reproducibility.md"
    if args.check:
        for path, expected in generated_pages(chapters(), results, page).items():
            actual = path.read_text(encoding="utf-8") if path.is_file() else ""
            if expected != actual:
                _err(f"{path} is out of date with the records in {results}; run `causalbandits report`")
                return EXIT_FAILED
        print(f"{page}, the landing page's summary and the chapter summaries match the records in {results}")
        return 0
    path = write_reproducibility(chapters(), results, page)
    print(f"wrote {path}, the landing page's summary and the chapter summaries")
    return 0


# ---------------------------------------------------------------------------- cite
def cmd_cite(args: argparse.Namespace) -> int:
    from .citation import Citation, citation_cff
    from .provenance import replaceable_stand_ins
    from .records import RecordError, load_record

    if args.cff:
        if args.record is not None or args.claim is not None:
            raise ParameterError("cite --cff: cites the book itself; give no record or --claim with it")
        print(citation_cff(paths.book_root()), end="")
        return 0
    if args.record is None:
        raise ParameterError("cite: give a record (.json) to cite, or --cff for the book itself")
    path = Path(args.record)
    if not path.exists():
        raise FileNotFoundError(f"cite: {path}: no such record; give a record (.json)")
    try:
        record = load_record(path)
    except RecordError as exc:
        _err(str(exc))
        return EXIT_FAILED
    missing = replaceable_stand_ins(record["data"])
    if missing and not args.allow_stand_in:
        _err(
            f"{path}: a record that ran on the synthetic stand-in for {', '.join(missing)}, not the real data; "
            "re-run it with the data in place, or pass --allow-stand-in to cite it as such"
        )
        return EXIT_FAILED
    if record["profile"] != "paper" and not args.allow_below_paper:
        _err(
            f"{path}: a record at the {record['profile']!r} profile, below the paper's scale; cite the paper-profile "
            "record (results/paper/...), or pass --allow-below-paper to cite it as such"
        )
        return EXIT_FAILED
    citation = Citation(record, path, claim_id=args.claim)
    shown = {"bibtex": [citation.bibtex()], "text": [citation.text()], "csl": [citation.csl()]}
    shown["both"] = shown["bibtex"] + shown["text"]
    print("\n\n".join(shown[args.format]))
    return 0


# ---------------------------------------------------------------------------- sweep / collect
def cmd_sweep(args: argparse.Namespace) -> int:
    from .bounds import check_jobs, check_memory, estimate_bytes
    from .execution import resolve_target
    from .sweep import count_grid, expand_grid, run_sweep

    notebooks = resolve_target(args.target)
    if len(notebooks) != 1:
        raise ParameterError(f"sweep runs one notebook; {args.target!r} names {len(notebooks)}: give CHAPTER/NOTEBOOK")
    spec = notebooks[0]
    check_jobs(args.jobs, args.force)
    if args.retries < 0:
        raise ParameterError(f"--retries {args.retries}: give 0 or more extra attempts per failed point")
    if args.max_points is not None and args.max_points < 1:
        raise ParameterError(f"--max-points {args.max_points}: give a positive number of points")
    total, _ = count_grid(spec, args.param or [])
    points = expand_grid(spec, args.param or [], profile=args.profile, max_points=args.max_points)  # validates all
    if len(points) < total:
        print(f"{total - len(points)} duplicate point(s) merged: {len(points)} distinct point(s)")
    at_once = min(args.jobs, len(points))
    worst = max(points, key=lambda p: estimate_bytes(spec.resolve(p)[0]))
    check_memory(spec.id, spec.resolve(worst)[0], at_once=at_once, force=args.force)
    out = writable_folder(Path(args.out), "--out")
    if args.scheduler:
        from .cluster import describe_scheduler

        describe_scheduler(args.scheduler, args.jobs)  # unreachable: one line, exit 2, nothing ran
    report = run_sweep(spec, points, out, jobs=args.jobs, scheduler=args.scheduler, retries=args.retries)
    print(
        f"{len(report.done)} point(s) run, {len(report.skipped)} skipped (already recorded), {len(report.failed)} "
        "failed; "
        f"{report.seconds:.1f} s; records under {Path(args.out).resolve() / spec.chapter / spec.name}"
    )
    if report.failed:
        for pid, err in report.failed.items():
            _err(f"point {pid} failed: {err.strip().splitlines()[0] if err.strip() else 'unknown error'}")
        _err("re-run the same command to retry only the missing points")
        return EXIT_FAILED
    return 0


def cmd_sensitivity(args: argparse.Namespace) -> int:
    from .execution import resolve_target
    from .sensitivity import run_sensitivity
    from .sweep import SweepError

    if args.jobs < 1:
        raise ParameterError(f"--jobs {args.jobs}: give a positive number of worker processes")
    notebooks = [nb for nb in resolve_target(args.target) if nb.open_choices()]
    if not notebooks:
        print(f"{args.target}: no notebook declares an open choice with alternatives (ours: true, alternatives: [...])")
        return 0
    if args.scheduler:
        from .cluster import describe_scheduler

        print(f"on {describe_scheduler(args.scheduler, args.jobs).line()}", flush=True)  # unreachable: exit 2
    failed = 0
    for spec in notebooks:
        try:
            run_sensitivity(
                spec,
                args.profile,
                Path(args.out),
                jobs=args.jobs,
                scheduler=args.scheduler,
                result_root=Path(args.results) if args.results else None,
            )
        except SweepError as exc:
            _err(str(exc))
            failed += 1
    return EXIT_FAILED if failed else 0


def cmd_collect(args: argparse.Namespace) -> int:
    from .records import atomic_write_text
    from .sweep import NO_RECORD, NOT_JUDGED, collect_points, parameter_columns, plot_metric, summarise, table_hash

    folder = Path(args.folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"collect: {folder}: no such folder; give a sweep's --out folder")
    if args.plot and not args.by:
        raise ParameterError("--plot METRIC needs --by PARAMETER (the swept parameter on the x axis)")
    if args.strict and args.allow_missing:
        raise ParameterError("--strict and --allow-missing contradict each other; give one")
    out = Path(args.csv) if args.csv else folder / "collected.csv"
    _check_not_a_file(out.parent, "--csv")
    if out.is_dir():
        raise ParameterError(f"--csv {out}: is a folder; give the path of a .csv file")
    found = collect_points(folder, metrics=args.metric or None)
    table = found.table
    for note in found.notes:
        print(note)
    problems = list(found.left_out.items()) + list(found.missing.items())
    level, shown = ("warning" if args.allow_missing else "error"), 20
    for point, why in problems[:shown]:
        print(f"causalbandits: {level}: point {point}: {why}", file=sys.stderr)
    if len(problems) > shown:
        print(
            f"causalbandits: {level}: ... and {len(problems) - shown} more point(s) without a valid record",
            file=sys.stderr,
        )
    if table.empty:
        _err(f"{folder}: no valid record of a sweep point (a point folder's record.json) among {found.points} point(s)")
        return EXIT_FAILED
    lacking = f"{found.without_row} of the grid's {found.points} point(s) have no valid record"
    detail = f"{len(found.missing)} missing, {len(found.left_out)} left out"
    if problems and not args.allow_missing:
        earlier = f" (the earlier {out} is not this folder's table)" if out.exists() else ""
        _err(
            f"{folder}: {lacking} ({detail}); no table written{earlier}: re-run the sweep to complete it, or pass "
            f"--allow-missing to tabulate the {len(table)} point(s) that have one"
        )
        return EXIT_FAILED
    params = parameter_columns(table)
    for name in args.metric or []:
        if name not in table.columns:
            raise ParameterError(f"--metric {name}: no record under {folder} has this metric")
    if args.summary and args.over not in params:
        raise ParameterError(
            f"--over {args.over}: not a parameter of the table, whose parameters are {', '.join(params)}"
        )
    if args.plot and args.by not in params:
        raise ParameterError(f"--by {args.by}: not a parameter of the table; its parameters are {', '.join(params)}")
    if args.plot and (args.plot not in table.columns or args.plot in params):
        metrics = [c for c in table.columns if "." in c and not c.startswith("verdict:")]
        raise ParameterError(f"--plot {args.plot}: not a metric of the table; its metrics are {', '.join(metrics)}")
    csv_text = table.to_csv(index=False, float_format="%.10g", lineterminator="\n")
    atomic_write_text(out, csv_text)
    whole = "every point of the grid" if not problems else f"{len(table)} of the grid's {found.points} points"
    print(f"{len(table)} point(s) -> {out}" + (f"; {lacking} ({detail}), left out of the table" if problems else ""))
    print(f"table SHA-256 {table_hash(csv_text)} ({whole}; cite this with the command that made the sweep)")
    if args.summary:
        summary = summarise(table, over=args.over, absent=found.absent)
        path = out.with_suffix(".summary.csv")
        atomic_write_text(path, summary.to_csv(index=False, float_format="%.10g", lineterminator="\n"))
        claims = summary[summary["what"] == "claim"] if len(summary) else summary
        print(
            f"summary over {args.over} -> {path} ({len(claims)} claim row(s), "
            f"{len(summary) - len(claims)} metric row(s))"
        )
        unknown = sum(a is None for a in found.absent)
        if unknown:
            print(f"  {unknown} point(s) without a valid record and of unknown parameters are in no row's denominator")
        fixed = ("notebook", "what", "name", "points", "measured", "value", "low", "high", NOT_JUDGED, NO_RECORD)
        verdicts = [c for c in summary.columns if c not in fixed and c not in params]
        others = [c for c in params if c != args.over and c in summary.columns]
        for _, r in claims.iterrows():
            where = ", ".join(f"{c}={r[c]}" for c in others if c != "profile")
            counts = ", ".join(f"{c} {int(r[c])}" for c in (*verdicts, NOT_JUDGED, NO_RECORD) if r[c])
            points = int(r["points"])
            if r["value"] == r["value"]:  # not NaN: testable at some point
                said = f"reproduced at {r['value']:.0%} of {points} point(s)"
            elif int(r["measured"]) == points:
                said = f"not testable at any of its {points} point(s)"
            else:
                said = f"not testable at any of the {int(r['measured'])} of its {points} point(s) that judged it"
            print(f"  {r['name']} ({where}): {said} ({counts})")
    if args.plot:
        png = plot_metric(table, args.plot, args.by, out.with_suffix(f".{args.plot}.png"))
        print(f"plot -> {png}")
    return 0


# ---------------------------------------------------------------------------- diff
def _check_rtol(rtol: float) -> None:
    if not rtol >= 0:
        raise ParameterError(f"--rtol {rtol}: give a relative tolerance >= 0 (0 compares exactly)")


def _diff_records(folder: Path) -> dict[str, Path]:
    """The records below ``folder`` by relative path: every ``*.json`` but a sweep's point
    descriptions (``point.json``) and what a running sweep stages (``.work-*``)."""
    from .records import find_records

    found = {}
    for path in find_records(folder):
        rel = path.relative_to(folder)
        if path.name == "point.json" or any(part.startswith(".work-") for part in rel.parts):
            continue
        found[rel.as_posix()] = path
    return found


def cmd_diff(args: argparse.Namespace) -> int:
    from .records import RESULT_KEYS, RecordError, compare_results, load_record

    _check_rtol(args.rtol)
    if args.max_lines < 0:
        raise ParameterError(f"--max-lines {args.max_lines}: give a number of lines >= 0")
    old, new = Path(args.old), Path(args.new)
    for p in (old, new):
        if not p.exists():
            raise FileNotFoundError(f"diff: {p}: no such record or folder; give two records (.json) or two folders")
    if old.is_dir() != new.is_dir():
        folder, record = (old, new) if old.is_dir() else (new, old)
        raise ParameterError(
            f"diff: {folder} is a folder and {record} a file; give two records (.json) or two folders of records"
        )
    if old.is_dir():
        a, b = _diff_records(old), _diff_records(new)
        if not a and not b:
            raise ParameterError(f"diff: neither {old} nor {new} holds a record (*.json); give folders of records")
    else:
        a, b = {new.name: old}, {new.name: new}
    what = "/".join(("parameters",) + RESULT_KEYS)
    same = "identical" if args.rtol == 0 else f"equal within rtol {args.rtol:g}"
    compared, different, invalid = 0, 0, 0
    only_old, only_new = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    for rel in sorted(set(a) & set(b)):
        try:
            lines = compare_results(load_record(a[rel]), load_record(b[rel]), rtol=args.rtol)
        except RecordError as exc:
            invalid += 1
            _err(f"{rel}: not compared: {exc}")
            continue
        compared += 1
        if lines:
            different += 1
            print(f"{rel}: {len(lines)} difference(s)")
            for line in lines[: args.max_lines]:
                print(f"  {line}")
            if len(lines) > args.max_lines:
                print(f"  ... and {len(lines) - args.max_lines} more")
    for rel in only_old:
        print(f"{rel}: missing in {new} (a record only in {old})")
    for rel in only_new:
        print(f"{rel}: missing in {old} (a record only in {new})")
    summary = f"{compared} record(s) compared ({what}): {compared - different} {same}, {different} differ"
    if only_old or only_new:
        summary += f"; {len(only_old) + len(only_new)} missing, not compared ({len(only_old)} only in {old}, "
        summary += f"{len(only_new)} only in {new})"
    if invalid:
        summary += f"; {invalid} not compared, invalid"
    print(summary)
    return EXIT_FAILED if different or only_old or only_new or invalid else 0


# ---------------------------------------------------------------------------- rejudge
def cmd_rejudge(args: argparse.Namespace) -> int:
    import os
    import subprocess

    from .execution import blas_environment
    from .rejudge import rejudge_paths

    env = blas_environment()
    if any(os.environ.get(k) != v for k, v in env.items()):
        # the checks' arithmetic (numpy's log, sums) must be the executions': numpy reads these
        # variables when it is first imported, so judge in a fresh interpreter that has them
        for p in args.records:
            if not Path(p).exists():
                raise FileNotFoundError(f"rejudge: {p}: no such record or folder")
        cmd = [sys.executable, "-m", "causalbandits_lib.book.cli", "rejudge", *args.records]
        cmd += ["--max-lines", str(args.max_lines)]
        return subprocess.run(cmd, env={**os.environ, **env}, check=False).returncode

    results = rejudge_paths([Path(p) for p in args.records])
    bad = 0
    for r in results:
        judged = r.n_claims - len(r.without_evidence)
        print(
            f"{r.path}: {judged} claim(s) judged again, {judged - len(r.differences)} identical, "
            f"{len(r.differences)} differ"
            + (f", {len(r.without_evidence)} without stored evidence" if r.without_evidence else "")
        )
        for cid, lines in list(r.differences.items())[: args.max_lines]:
            print(f"  claims.{cid}: {'; '.join(lines)}")
        for cid in r.without_evidence[: args.max_lines]:
            print(f"  claims.{cid}: no evidence stored (record made before evidence was kept)")
        bad += not r.ok
    print(f"{len(results)} record(s): {len(results) - bad} reproduce every verdict, {bad} do not")
    return EXIT_FAILED if bad or not results else 0


# ---------------------------------------------------------------------------- verify
def _print_verification(v, rtol: float, max_lines: int, kept: bool = True) -> None:
    if v.ok:
        if v.smoke:
            # without --out the re-run is in a temporary folder, removed before the command ends
            where = f"re-run kept at {v.rerun}" if kept else "re-run in a temporary folder, removed; --out DIR keeps it"
            print(f"      ok: the notebook runs and judges all its claims ({where})", flush=True)
        else:
            how = "identical" if v.rerun_hash == v.cited_hash else f"equal within rtol {rtol:g}"
            print(f"      ok: results {how} (results hash {v.cited_hash[:16]})", flush=True)
        return
    print(
        f"      DIFFERS: {len(v.differences)} difference(s) (cited results hash {v.cited_hash[:16]}, "
        f"re-run {str(v.rerun_hash)[:16]})"
    )
    for line in v.differences[:max_lines]:
        print(f"        {line}")
    if len(v.differences) > max_lines:
        print(f"        ... and {len(v.differences) - max_lines} more")
    sys.stdout.flush()


def _print_claims(v, claim_ids: list[str]) -> None:
    """The cited claims' verdicts, in the record and in the re-run."""
    if not claim_ids:
        return
    from .records import load_record

    cited = {c["id"]: c["verdict"] for c in load_record(v.record)["claims"]}
    rerun = {c["id"]: c["verdict"] for c in load_record(v.rerun)["claims"]} if v.rerun else {}
    where = "the smoke re-run" if v.smoke else "the re-run"
    for cid in claim_ids:
        verdict = rerun.get(cid, "not judged")
        print(f"      claim {cid}: {cited.get(cid)} in the record, {verdict} in {where}", flush=True)


def cmd_verify(args: argparse.Namespace) -> int:
    import shutil
    import tempfile

    from ..core.parallel import map_tasks
    from .bounds import check_jobs
    from .records import find_records
    from .verify import check_version, find_claim_record, verify_by_path, verify_record

    _check_rtol(args.rtol)
    check_jobs(args.jobs, False)
    if not args.records and not args.claim:
        raise ParameterError("verify: give records (.json), folders of records, or --claim ID")
    claims = {claim_id: find_claim_record(claim_id) for claim_id in args.claim or []}
    targets: list[Path] = list(dict.fromkeys(claims.values()))
    for given in args.records:
        path = Path(given)
        if path.is_dir():
            found = find_records(path)
            if not found:
                raise ParameterError(f"{path}: a folder without records (*.json); give records or folders of records")
            targets += found
        elif path.is_file():
            targets.append(path)
        else:
            raise ParameterError(f"{path}: no such record or folder; give records (.json) or folders of records")
    for line in check_version(paths.book_root(), commit=args.commit, tree=args.tree, swhid=args.swhid):
        print(line, flush=True)
    cluster = None
    if args.scheduler:
        from .cluster import describe_scheduler

        if args.retries < 0:
            raise ParameterError(f"--retries {args.retries}: give 0 or more extra attempts per record")
        cluster = describe_scheduler(args.scheduler, args.jobs)  # unreachable: one line, exit 2, nothing ran
    out = (
        writable_folder(Path(args.out), "--out") if args.out else Path(tempfile.mkdtemp(prefix="causalbandits-verify-"))
    )
    mode = "smoke re-execution" if args.smoke else "re-run with the record's parameters"
    failed = 0
    try:
        if cluster is not None:
            failed = _verify_on_cluster(targets, claims, out, args, mode, cluster)
        elif args.jobs == 1 or len(targets) == 1:
            for i, path in enumerate(targets, 1):
                print(f"[{i}/{len(targets)}] {path}: {mode}", flush=True)
                v = verify_record(path, out, rtol=args.rtol, smoke=args.smoke, timeout=args.timeout)
                failed += not v.ok
                _print_verification(v, args.rtol, args.max_lines, kept=bool(args.out))
                _print_claims(v, [c for c, p in claims.items() if p == path])
        else:
            print(f"{len(targets)} record(s), {mode}, on {args.jobs} worker processes", flush=True)
            where = dict(out_dir=str(out), rtol=args.rtol, smoke=args.smoke, timeout=args.timeout)
            tasks = [dict(path=str(p), **where) for p in targets]

            def report(o) -> None:
                nonlocal failed
                print(f"  {targets[o.index]}:", flush=True)
                if o.ok:
                    failed += not o.result.ok
                    _print_verification(o.result, args.rtol, args.max_lines, kept=bool(args.out))
                else:
                    failed += 1
                    first = (o.error or "unknown error").strip().splitlines()[-1]
                    print(f"      DIFFERS: the verification itself failed: {first}", flush=True)

            map_tasks(verify_by_path, tasks, jobs=args.jobs, retries=0, on_done=report)
    finally:
        if not args.out:
            shutil.rmtree(out, ignore_errors=True)
    print(f"{len(targets)} record(s) verified: {len(targets) - failed} ok, {failed} differ")
    return EXIT_FAILED if failed else 0


def _verify_on_cluster(targets: list[Path], claims: dict, out: Path, args, mode: str, cluster) -> int:
    """``verify --scheduler``: each record's notebook re-run as a task on the cluster; the worker
    sends the executed notebook and the new record back, they are written into ``out`` here and
    compared with the cited record here. Returns how many records differ."""
    from ..core.parallel import map_tasks
    from .execution import ExecutionError, execute_detached, write_detached
    from .sweep import signals_to_this_process_only
    from .verify import failed_rerun, judge_rerun, plan_verification

    plans = [plan_verification(p, args.smoke) for p in targets]  # every record checked before anything runs
    tasks = [
        dict(
            notebook=spec.id,
            parameters=given,
            timeout=args.timeout,
            shown_as=str(out.resolve() / spec.chapter / f"{spec.name}.json"),
        )
        for _, spec, given in plans
    ]
    print(f"{len(targets)} record(s), {mode}, on {cluster.line()}", flush=True)
    failed = 0

    def report(o) -> None:
        nonlocal failed
        path, cited = targets[o.index], plans[o.index][0]
        print(f"  {path}:", flush=True)
        if o.ok:
            try:
                done = write_detached(o.result, out, out)
            except ExecutionError as exc:
                v = failed_rerun(path, cited, args.smoke, str(exc))
            else:
                v = judge_rerun(path, cited, done.record, args.smoke, args.rtol)
        else:
            v = failed_rerun(path, cited, args.smoke, (o.error or "unknown error").strip().splitlines()[-1])
        failed += not v.ok
        _print_verification(v, args.rtol, args.max_lines, kept=bool(args.out))
        _print_claims(v, [c for c, p in claims.items() if p == path])

    with signals_to_this_process_only():
        map_tasks(
            execute_detached, tasks, jobs=args.jobs, scheduler=args.scheduler, retries=args.retries, on_done=report
        )
    return failed


# ---------------------------------------------------------------------------- main
def _cluster_arguments(p: argparse.ArgumentParser, what: str) -> None:
    """``--scheduler`` and ``--retries``, the same for every command that can run on Dask."""
    p.add_argument(
        "--scheduler",
        help="Dask scheduler address (tcp://HOST:PORT), or 'local' for a LocalCluster of --jobs workers; "
        "records are written here, never on a worker",
    )
    p.add_argument(
        "--retries",
        type=int,
        default=2,
        help=f"extra attempts for {what} whose task failed or whose worker died (with --scheduler) [%(default)s]",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="causalbandits",
        description="Run, report and cite the Causal & Fair Bandits executable book.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="chapters, notebooks and their parameters")
    p.add_argument("target", nargs="?", help="CHAPTER or CHAPTER/NOTEBOOK (default: everything)")
    p.add_argument("--brief", action="store_true", help="notebooks only, no parameters")
    p.add_argument("--all-params", action="store_true", help="also list profile and seed")
    p.add_argument(
        "--records",
        action="append",
        metavar="DIR",
        help="also take the smoke and book times from the records in DIR (a run's or a sweep's --out); repeatable",
    )
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("run", help="execute notebooks with papermill and write records")
    p.add_argument("target", help="CHAPTER, CHAPTER/NOTEBOOK (a unique prefix is enough) or 'all'")
    p.add_argument(
        "-p", "--param", action="append", metavar="NAME=VALUE", help="set a parameter (repeatable); lists as [a,b]"
    )
    p.add_argument("--profile", choices=("smoke", "book", "paper"), help="execution profile (default: book)")
    p.add_argument(
        "--out", default="causalbandits-out", help="folder for executed notebooks (and records) [%(default)s]"
    )
    p.add_argument("--record-dir", help="folder for records (default: --out)")
    p.add_argument("--timeout", type=int, default=None, help="seconds allowed per cell (default: none)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--jobs", type=int, default=1, help="notebooks executed at once, each in its own process [%(default)s]"
    )
    p.add_argument("--force", action="store_true", help="skip the memory estimate and the --jobs <= cores check")
    p.add_argument(
        "--html", action="store_true", help="also render each executed notebook to a self-contained HTML page"
    )
    _cluster_arguments(p, "a notebook")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("sweep", help="execute one notebook over a grid of parameters (joblib or Dask)")
    p.add_argument("target", help="CHAPTER/NOTEBOOK (a unique prefix is enough)")
    p.add_argument(
        "-p",
        "--param",
        action="append",
        metavar="NAME=V1,V2",
        help="values to sweep: a,b,c | start:stop[:step] | lists separated by ';'",
    )
    p.add_argument("--profile", choices=("smoke", "book", "paper"), help="execution profile (default: book)")
    p.add_argument("--out", default="causalbandits-sweep", help="folder of the sweep's records [%(default)s]")
    p.add_argument("--jobs", type=int, default=1, help="worker processes [%(default)s]")
    _cluster_arguments(p, "a point")
    p.add_argument("--force", action="store_true", help="skip the memory estimate and the --jobs <= cores check")
    p.add_argument(
        "--max-points", type=int, default=None, help="largest grid expanded (default: 10000, counted before expanding)"
    )
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser(
        "sensitivity",
        help="judge every claim again under each alternative of the choices the paper left open "
        "-> results/sensitivity/",
    )
    p.add_argument("target", help="CHAPTER, CHAPTER/NOTEBOOK or 'all' (notebooks without open choices are skipped)")
    p.add_argument("--profile", choices=("smoke", "book", "paper"), default="book", help="profile [%(default)s]")
    p.add_argument("--out", default="_build/sensitivity", help="folder of the runs' records [%(default)s]")
    p.add_argument("--results", help="where the sensitivity records go (default: results/sensitivity)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes [%(default)s]")
    p.add_argument("--scheduler", help="Dask scheduler address, or 'local' for a LocalCluster of --jobs workers")
    p.set_defaults(func=cmd_sensitivity)

    p = sub.add_parser("collect", help="gather a sweep's records into one table (CSV)")
    p.add_argument("folder", help="the sweep's --out folder (or any folder of records)")
    p.add_argument("--metric", action="append", help="metric to include (repeatable; default: every scalar metric)")
    p.add_argument("--csv", help="output CSV (default: FOLDER/collected.csv)")
    p.add_argument(
        "--plot", metavar="METRIC", help="also plot METRIC against --by with its 95%% interval over the other points"
    )
    p.add_argument("--by", metavar="PARAMETER", help="the swept parameter for --plot")
    p.add_argument(
        "--summary",
        action="store_true",
        help="also write FOLDER/collected.summary.csv: per claim the share of points where it is reproduced, per "
        "metric the mean and 95%% interval over --over",
    )
    p.add_argument("--over", default="seed", help="the parameter --summary summarises over [%(default)s]")
    p.add_argument(
        "--allow-missing",
        action="store_true",
        help="write the table even when points of the grid have no valid record (missing, invalid or not their "
        "point's); it says how many (without it: exit 1, no table)",
    )
    p.add_argument("--strict", action="store_true", help="exit 1 when a point has no valid record (the default)")
    p.set_defaults(func=cmd_collect)

    p = sub.add_parser("report", help="regenerate book/reproducibility.md from the paper-scale records")
    p.add_argument("--results", help="records folder (default: results/paper)")
    p.add_argument("--page", help="page to write (default: book/reproducibility.md)")
    p.add_argument("--check", action="store_true", help="only check that the page is up to date")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("cite", help="print a citation that pins a record (or one claim of it)")
    p.add_argument("record", nargs="?", help="path to a record (.json)")
    p.add_argument(
        "--cff", action="store_true", help="print CITATION.cff pinned to this checkout's commit (the book itself)"
    )
    p.add_argument("--claim", metavar="ID", help="cite one claim of the record (its id, e.g. primer.ucb1.log_rate)")
    p.add_argument(
        "--format",
        choices=("bibtex", "text", "csl", "both"),
        default="both",
        help="both = bibtex and text [%(default)s]",
    )
    p.add_argument(
        "--allow-stand-in",
        action="store_true",
        help="cite a record that ran on a synthetic stand-in (the citation says so)",
    )
    p.add_argument(
        "--allow-below-paper",
        action="store_true",
        help="cite a record of the smoke or book profile (the citation says so)",
    )
    p.set_defaults(func=cmd_cite)

    p = sub.add_parser("diff", help="compare the results (metrics, curves, claims) of two records or folders")
    p.add_argument("old", help="a record (.json) or a folder of records")
    p.add_argument("new", help="a record or a folder of records (matched to OLD by relative path)")
    p.add_argument("--max-lines", type=int, default=20, help="differences shown per record [%(default)s]")
    p.add_argument("--rtol", type=float, default=0.0, help="relative tolerance for numbers (0: exact) [%(default)s]")
    p.set_defaults(func=cmd_diff)

    p = sub.add_parser(
        "rejudge", help="judge every claim of records again from their stored evidence (exit 1 if any differs)"
    )
    p.add_argument("records", nargs="+", help="records (.json) or folders of records")
    p.add_argument("--max-lines", type=int, default=20, help="differences shown per record [%(default)s]")
    p.set_defaults(func=cmd_rejudge)

    p = sub.add_parser(
        "verify", help="re-run cited records with their parameters and compare the results (exit 1 if they differ)"
    )
    p.add_argument("records", nargs="*", help="records (.json) or folders of records")
    p.add_argument(
        "--claim",
        action="append",
        metavar="ID",
        help="verify the committed paper-scale record that holds this claim (as a citation names it); repeatable",
    )
    p.add_argument(
        "--commit",
        metavar="HEX",
        help="first check that this checkout is at this commit, files unchanged (exit 2 and nothing run if not)",
    )
    p.add_argument(
        "--tree",
        metavar="HEX",
        help="first check that this copy's files have this git tree id (any copy; exit 2 and nothing run if not)",
    )
    p.add_argument(
        "--swhid",
        metavar="SWHID",
        help="first check the version a citation names: swh:1:rev:<commit> or swh:1:dir:<tree> (exit 2 if not)",
    )
    p.add_argument("--out", help="keep the re-runs in this folder (default: a temporary folder, removed)")
    p.add_argument("--rtol", type=float, default=0.0, help="relative tolerance for numbers (0: exact) [%(default)s]")
    p.add_argument(
        "--smoke",
        action="store_true",
        help="only re-execute at the smoke profile: checks that the notebook runs and judges every claim",
    )
    p.add_argument("--timeout", type=int, default=None, help="seconds allowed per cell (default: none)")
    p.add_argument("--max-lines", type=int, default=20, help="differences shown per record [%(default)s]")
    p.add_argument(
        "--jobs", type=int, default=1, help="records verified at once, each in its own process [%(default)s]"
    )
    _cluster_arguments(p, "a record")
    p.set_defaults(func=cmd_verify)
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that it unwinds like Ctrl-C (workers stopped, staging
    folders removed) and ends with exit code 143."""


def _note_interrupt(on: bool = True) -> None:
    """Tell the execution module (when loaded: else no kernel runs) that the command is being
    interrupted, so that kernels are killed at once; without importing anything in a handler."""
    execution = sys.modules.get(f"{__package__}.execution")
    flag = getattr(execution, "INTERRUPTED", None)  # (None while the module is still being imported)
    if flag is not None:
        (flag.set if on else flag.clear)()


def _on_sigterm(signum, frame):
    _note_interrupt()
    raise Terminated()


def _on_sigint(signum, frame):
    _note_interrupt()
    raise KeyboardInterrupt()


def main(argv: Sequence[str] | None = None) -> int:
    import signal
    import threading

    previous: dict = {}
    if threading.current_thread() is threading.main_thread():
        previous[signal.SIGTERM] = signal.signal(signal.SIGTERM, _on_sigterm)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not when SIGINT is ignored
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, _on_sigint)
    try:
        _note_interrupt(False)
        args = build_parser().parse_args(argv)
        return _main(args)
    except Terminated:  # before the command started
        return _interrupted(terminated=True)
    except KeyboardInterrupt:
        return _interrupted(terminated=False)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _one_line(text: str) -> str:
    """An error message as one line: a newline (or other control character) inside a value that a
    message quotes is shown escaped, never as a line break."""
    return "".join(ch if ch >= " " and ch != "\x7f" else repr(ch)[1:-1] for ch in text.strip())


def _main(args: argparse.Namespace) -> int:
    import errno

    try:
        return int(args.func(args) or 0)
    except (ParameterError, SpecError) as exc:
        _err(_one_line(str(exc)))
        return EXIT_USAGE
    except FileNotFoundError as exc:
        _err(_one_line(str(exc)))
        return EXIT_USAGE
    except RecordError as exc:
        _err(_one_line(str(exc)))
        return EXIT_FAILED
    except OSError as exc:  # a full disk (or a folder gone) while something ran: one line, exit 1
        what = exc.strerror or type(exc).__name__
        where = f" at {exc.filename}" if exc.filename else ""
        full = exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
        hint = "free some space there (or give another --out) and run again" if full else "check it and run again"
        _err(_one_line(f"{what} (errno {exc.errno}){where}; {hint}"))
        return EXIT_FAILED
    except Terminated:
        return _interrupted(terminated=True)
    except KeyboardInterrupt:
        return _interrupted(terminated=False)
    except Exception as exc:
        flag = getattr(sys.modules.get(f"{__package__}.execution"), "INTERRUPTED", None)
        if flag is not None and flag.is_set():  # raised while unwinding from the signal
            return _interrupted(terminated=isinstance(exc.__context__, Terminated))
        raise


def _interrupted(terminated: bool) -> int:
    """The one line of an interrupted command (what papermill and asyncio would log about the
    execution it stopped is dropped while the interrupt flag is set: see ``execution.INTERRUPTED``)."""
    _note_interrupt()
    if terminated:
        _err("interrupted by SIGTERM; workers stopped, nothing partial left at the final paths")
        return EXIT_TERMINATED
    _err("interrupted (Ctrl-C); workers stopped, nothing partial left at the final paths")
    return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
