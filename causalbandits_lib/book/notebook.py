"""The session of one notebook execution: parameters, seeds, metrics, claims and its record.

Every notebook of the book starts the same way::

    # first code cell, tagged "parameters" (papermill injects its values after it)
    profile = "book"
    seed = 0
    T = None          # None: the value of the chosen profile

    # second code cell
    from causalbandits_lib.book.notebook import setup_notebook
    nb = setup_notebook("primer/01_bandits_and_regret", globals())

:func:`setup_notebook` validates every parameter against ``notebooks/<chapter>/parameters.yml``
(an unknown name, a wrong type or an out-of-range value stops the notebook there with an error that
names the parameter, the value and what is allowed), replaces each ``None`` by its profile value in
the notebook's namespace, and returns a :class:`NotebookRun`. The notebook registers metrics,
curves and claims on it, and its last cell calls :meth:`NotebookRun.finish`, which writes the
record atomically and shows the claims table.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import os
import time
import types
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from ..core.checks import RESULT_KINDS, VERDICTS, Margin, Verdict, on_stand_in, uses_check
from ..core.curves import summarise_curve
from ..core.runner import work_by_pair, work_ledger
from ..core.streams import SEED_SCHEME, notebook_seed_sequence
from ..core.tables import markdown_table
from . import paths
from .choices import merge_sensitivity
from .claims import Claim, claims_markdown, format_value
from .diagnoses import diagnosis_for, load_diagnoses, needs_diagnosis
from .params import NotebookSpec, load_chapter
from .provenance import git_info, library_fingerprint, package_versions, platform_info, replaceable_stand_ins
from .records import load_record, to_jsonable, write_record

__all__ = [
    "RECORD_DIR_ENV",
    "find_notebook_spec",
    "load_margins",
    "setup_notebook",
    "configure_figures",
    "show_table",
    "value_table",
    "NotebookRun",
    "PaperResults",
]

#: Environment variable naming the folder records are written to (set by ``causalbandits run``).
RECORD_DIR_ENV = "CAUSALBANDITS_RECORD_DIR"
#: The record's final path, when the execution stages it elsewhere first (set by ``causalbandits run``).
RECORD_SHOWN_AS_ENV = "CAUSALBANDITS_RECORD_FINAL_PATH"
#: Set by ``make book`` (and the book test's build): the pages are being published.
PUBLISH_ENV = "CAUSALBANDITS_PUBLISH"
#: ``ALLOW_STAND_IN=1`` lets a published page run on a stand-in for a real data set.
ALLOW_STAND_IN_ENV = "ALLOW_STAND_IN"


class StandInRefused(RuntimeError):
    """A page being published would run on a synthetic stand-in for a real data set."""


_IPYTHON_NAMES = {"In", "Out", "exit", "quit", "get_ipython", "open"}


def find_notebook_spec(notebook_id: str) -> NotebookSpec:
    """The :class:`NotebookSpec` of ``chapter/name`` from the chapter's ``parameters.yml``."""
    if notebook_id.count("/") != 1:
        raise ValueError(f"notebook id {notebook_id!r} must look like 'chapter/name'")
    chapter, name = notebook_id.split("/")
    folder = paths.notebooks_dir() / chapter
    if not folder.is_dir():
        raise ValueError(f"no chapter {chapter!r} in {paths.notebooks_dir()}")
    spec = load_chapter(folder)
    if name not in spec.notebooks:
        raise ValueError(f"chapter {chapter!r} declares no notebook {name!r}; it has {sorted(spec.notebooks)}")
    return spec.notebooks[name]


def load_margins(chapter: str) -> dict[str, Margin]:
    """The equivalence margins of a chapter: ``notebooks/<chapter>/margins.yml`` maps a claim id to
    ``{margin: number, basis: text}`` (where the number comes from: the paper's figure resolution,
    its own tolerance, a stated fraction of the effect). No file: no margins."""
    import yaml

    path = paths.notebooks_dir() / chapter / "margins.yml"
    if not path.is_file():
        return {}
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: must map claim ids to {{margin, basis}}")
    out = {}
    for cid, entry in raw.items():
        if not isinstance(entry, dict) or set(entry) != {"margin", "basis"}:
            raise ValueError(f"{path}: {cid}: needs exactly 'margin' (a positive number) and 'basis' (text)")
        if not str(cid).startswith(chapter + "."):
            raise ValueError(f"{path}: {cid}: a margin of chapter {chapter!r} names one of its claims")
        out[str(cid)] = Margin(float(entry["margin"]), str(entry["basis"]).strip(), str(cid))
    return out


def _user_parameters(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The plain-data names a notebook defined before setup (its parameters, plus anything
    papermill injected)."""
    hidden: set[str] = set()
    try:  # inside IPython, names it put there itself are listed in user_ns_hidden
        from IPython import get_ipython

        ip = get_ipython()
        if ip is not None and ip.user_ns is namespace:
            hidden = set(ip.user_ns_hidden)
    except ImportError:
        pass
    out = {}
    for name, value in namespace.items():
        if name.startswith("_") or name in hidden or name in _IPYTHON_NAMES:
            continue
        if isinstance(value, (types.ModuleType, type)) or callable(value):
            continue
        out[name] = value
    return out


def setup_notebook(notebook_id: str, namespace: dict[str, Any] | None = None, **given: Any) -> "NotebookRun":
    """Validate the notebook's parameters and start its run.

    Parameters
    ----------
    notebook_id : str
        ``"chapter/name"``, as in ``notebooks/<chapter>/<name>.md``.
    namespace : dict, optional
        The notebook's ``globals()``. Its parameter values are read from it, and each ``None`` is
        replaced there by the value of the chosen profile.
    **given
        Parameter values passed directly (for use outside a notebook, e.g. tests).

    Raises
    ------
    ParameterError
        For an unknown name, a wrong type or a value outside what is allowed.
    """
    spec = find_notebook_spec(notebook_id)
    values_in = dict(_user_parameters(namespace)) if namespace is not None else {}
    values_in.update(given)
    values, sources = spec.resolve(values_in)
    if namespace is not None:
        namespace.update(values)
    import warnings

    from ..core.datasets import StandInWarning

    warnings.filterwarnings("ignore", category=StandInWarning)  # use_dataset announces it on the page
    configure_figures()
    run = NotebookRun(spec, values, sources)
    run.show_parameters()
    return run


def configure_figures() -> None:
    """The book's figure style for the session: :func:`~causalbandits_lib.core.figures.use_book_style`
    (column width, font sizes) and, inside IPython, PNGs at twice the resolution ("retina"), which
    IPython stores with a width metadata of half the pixel width, so that myst-nb shows each image
    at its size in the column and sharp on any screen."""
    from ..core.figures import use_book_style

    try:
        from IPython import get_ipython
    except ImportError:
        get_ipython = None
    ip = get_ipython() if get_ipython is not None else None
    if ip is not None:
        import matplotlib.pyplot  # noqa: F401  (activates the inline backend before it is configured)
        from matplotlib_inline.config import InlineBackend

        # the same as `%config InlineBackend.figure_formats = {'retina'}`: the formatter is replaced now
        # and the backend keeps the setting if it is configured again
        inline = InlineBackend.instance(parent=ip)
        inline.figure_formats = {"retina"}
        from IPython.core.pylabtools import select_figure_formats

        select_figure_formats(ip, {"retina"}, **inline.print_figure_kwargs)
    use_book_style()


def _display_markdown(text: str) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import Markdown, display

        if get_ipython() is not None:
            display(Markdown(text))
            return
    except ImportError:
        pass
    print(text)


def _display_html(html: str, fallback: str) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display

        if get_ipython() is not None:
            display(HTML(html))
            return
    except ImportError:
        pass
    print(fallback)


def value_table(
    data: Mapping[Any, Any], index: str | None = None, columns: Sequence[Any] | None = None, value: str = "value"
):
    """A mapping as a table a page can show (a ``pandas.DataFrame``) instead of its printed repr,
    one row per key (named ``index``; tuple keys give one index level per position), the values
    unchanged and each shown as itself (an integer stays an integer beside floats): scalars in
    one column named ``value``; sequences (lists, tuples, arrays) one column per position (named
    ``columns``); mappings one column per inner key."""
    import pandas as pd

    keys, values = list(data), list(data.values())
    rows = pd.MultiIndex.from_tuples(keys) if keys and all(isinstance(k, tuple) for k in keys) else pd.Index(keys)
    if values and all(isinstance(v, Mapping) for v in values):
        frame = pd.DataFrame([dict(v) for v in values], index=rows, dtype=object)
    elif values and all(isinstance(v, (list, tuple, np.ndarray)) for v in values):
        frame = pd.DataFrame([list(v) for v in values], index=rows, columns=columns, dtype=object)
    else:
        frame = pd.DataFrame({value: pd.Series(values, index=rows, dtype=object)})
    if rows.nlevels == 1:
        frame.index.name = index
    return frame


def show_table(data: Mapping[Any, Any], caption: str | None = None, **kw: Any) -> None:
    """Show :func:`value_table` of ``data`` (with ``caption`` as a sentence above it)."""
    frame = value_table(data, **kw)
    try:
        from IPython import get_ipython
        from IPython.display import Markdown, display

        if get_ipython() is not None:
            if caption:
                display(Markdown(caption))
            display(frame)
            return
    except ImportError:
        pass
    if caption:
        print(caption)
    print(frame.to_string())


class NotebookRun:
    """What one execution of a notebook measured, and where its record goes."""

    def __init__(self, spec: NotebookSpec, values: dict[str, Any], sources: dict[str, str]):
        self.spec = spec
        self.params = types.MappingProxyType(dict(values))
        self.sources = dict(sources)
        self.profile: str = values["profile"]
        self.seed: int = values["seed"]
        self.metrics: dict[str, Any] = {}
        self.curves: dict[str, Any] = {}
        self.claims: list[Claim] = []
        self.data: list[dict[str, Any]] = []
        self.sections: dict[str, float] = {}
        # every simulation of the execution (and of its worker processes): timings.simulations
        self._ledger = work_ledger()
        self.work = self._ledger.__enter__()
        self._started_wall = _dt.datetime.now(_dt.timezone.utc)
        self._started = time.perf_counter()
        self.record_path: Path | None = None

    # -- identity ---------------------------------------------------------------------------
    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def chapter(self) -> str:
        return self.spec.chapter

    def __getattr__(self, name: str) -> Any:
        params = self.__dict__.get("params")
        if params is not None and name in params:
            return params[name]
        raise AttributeError(name)

    def show_parameters(self) -> None:
        rows = [[f"`{k}`", format_value(v), self.sources[k]] for k, v in self.params.items()]
        table = markdown_table(["parameter", "value", "from"], rows, name=f"parameters of {self.spec.id}")
        _display_markdown(f"**{self.spec.title}**, profile `{self.profile}`, seed {self.seed}\n\n" + table)

    # -- randomness -------------------------------------------------------------------------
    def seed_sequence(self, name: str) -> np.random.SeedSequence:
        """An independent :class:`~numpy.random.SeedSequence` for a named purpose of this notebook
        (e.g. generating an instance); simulations take :attr:`seed` and derive their per-run
        streams themselves (:mod:`causalbandits_lib.core.streams`)."""
        return notebook_seed_sequence(self.seed, name)

    def rng(self, name: str) -> np.random.Generator:
        """A :class:`numpy.random.Generator` for a named purpose (see :meth:`seed_sequence`)."""
        return np.random.Generator(np.random.PCG64(self.seed_sequence(name)))

    # -- margins stated with the claims -------------------------------------------------------
    def margin(self, claim_id: str) -> Margin:
        """The equivalence margin stated for ``claim_id`` in ``notebooks/<chapter>/margins.yml``
        (committed with the claims, before any record; see :func:`load_margins`)."""
        margins = load_margins(self.chapter)
        if claim_id not in margins:
            raise KeyError(
                f"no margin for {claim_id!r} in notebooks/{self.chapter}/margins.yml: state it there (value and "
                f"basis) before judging an equality; it has {sorted(margins) or 'none'}"
            )
        return margins[claim_id]

    def _check_margins(self, claim_id: str, evidence: Mapping[str, Any] | None) -> None:
        """Every margin a verdict used is one of the chapter's stated margins, unchanged."""
        stated = load_margins(self.chapter)

        def walk(x):
            if isinstance(x, dict):
                if set(x) == {"__margin__"}:
                    yield x["__margin__"]
                    return
                for v in x.values():
                    yield from walk(v)
            elif isinstance(x, list):
                for v in x:
                    yield from walk(v)

        for m in walk(evidence or {}):
            ref = stated.get(m.get("claim", ""))
            if ref is None or ref.value != m["value"] or ref.basis != m["basis"]:
                raise ValueError(
                    f"claim {claim_id}: margin {m.get('value')} ({m.get('claim') or 'unnamed'}) is not a margin stated "
                    f"in notebooks/{self.chapter}/margins.yml; use nb.margin(claim_id)"
                )

    # -- measurements -----------------------------------------------------------------------
    def metric(self, name: str, value: Any) -> None:
        """Record a named metric (a number or a list of numbers). Returns nothing, so that a cell
        ending in ``nb.metric(...)`` does not print the value (``np.float64(...)``) on the page."""
        if not name or " " in name or name.startswith(".") or name.endswith("."):
            raise ValueError(
                f"metric name {name!r} must be dotted words without spaces, e.g. 'email.final_regret.D-UCB'"
            )
        self.metrics[name] = to_jsonable(value)

    def other_values(self, name: str) -> list[Any]:
        """The values of the open choice ``name`` other than this execution's, ascending: our value
        at this profile and its alternatives (``parameters.yml``), less the value given. A notebook
        that judges the alternatives itself reads them here, so that it is right also when the
        sensitivity sweep runs it at an alternative."""
        choices = self.spec.open_choices()
        if name not in choices:
            known = ", ".join(choices) or "none"
            raise ValueError(f"{name!r} is not an open choice of {self.id} (open choices: {known})")
        p = choices[name]
        return sorted({p.profiles[self.profile], *p.alternatives} - {self.params[name]})

    def metric_items(self, items: Mapping[str, Any]) -> None:
        """Record every ``name: value`` of a mapping as :meth:`metric` does. Returns nothing."""
        for name, value in items.items():
            self.metric(name, value)

    def metric_table(self, prefix: str, table: Any) -> None:
        """Record every cell of a pandas DataFrame as the metric ``prefix.ROW.COLUMN`` (a row label
        that is a tuple gives one dotted word per level; spaces become ``_``). Returns nothing."""

        def word(x: Any) -> str:
            return (f"{x:g}" if isinstance(x, float) else str(x)).replace(" ", "_")

        for row, values in table.iterrows():
            parts = row if isinstance(row, tuple) else (row,)
            for column, value in values.items():
                self.metric(".".join([prefix, *(word(p) for p in parts), word(column)]), value)

    def curve(self, name: str, values: np.ndarray, cumulative: bool = True, n_points: int = 200) -> None:
        """Record a per-round curve of shape ``(n_runs, T)``, downsampled to ``n_points`` log-spaced
        rounds with the mean, standard deviation and 5%/95% quantiles over runs. Returns nothing
        (a cell ending in ``nb.curve(...)`` prints nothing on the page)."""
        summary = summarise_curve(values, n_points=n_points, cumulative=cumulative)
        summary["cumulative"] = bool(cumulative)
        self.curves[name] = summary

    def claim(
        self,
        id: str,
        statement: str,
        result: Verdict,
        paper_value: Any = None,
        measured: Any = None,
        source: str = "",
        section: str = "claims",
        kind: str | None = None,
        datasets: Sequence[str] | None = None,
        ours: bool = False,
        reconstructed: bool = False,
    ) -> Claim:
        """Register a claim with the verdict computed by a check of :mod:`causalbandits_lib.core.checks`.

        ``kind`` is one of :data:`~causalbandits_lib.core.checks.KINDS` (``experiment``, ``theorem``,
        ``identity``, ``construction``); a claim that declares it also records the check's details.

        ``ours=True`` marks a claim the paper does not make (our question, variant or extension):
        the tables label it and the reproducibility page counts it apart. ``reconstructed=True``
        marks a paper value we reconstructed because the paper does not print it.

        ``datasets`` names the data sets the claim's measurement read. By default it is every data
        source read in this execution so far, whatever the statement says: what the loaders
        declared (:func:`~causalbandits_lib.core.datasets.declare`; :func:`~causalbandits_lib.core.
        datasets.fetch` and :func:`~causalbandits_lib.core.datasets.stand_in_provenance` do) and what
        :meth:`use_dataset` pinned. When one of them is the synthetic stand-in of a real data set,
        the claim is ``not testable here`` (:func:`~causalbandits_lib.core.checks.on_stand_in`): a
        stand-in can say nothing about the real data; its measurement is kept beside the verdict.
        A claim whose measurement read no data set says ``datasets=[]``; one that names a set not
        read as real data while a stand-in was read, or a permanent stand-in, is not testable either.

        A result (kind ``experiment`` or ``theorem``) must be judged by a check that reports a
        measured margin and its uncertainty: a verdict of ``check_all`` over booleans (anywhere in
        it) is refused for a result; such a claim is an identity or a construction.
        """
        if not isinstance(result, Verdict):
            raise TypeError("result must be a Verdict from a check function of causalbandits_lib.core.checks")
        if result.check is None:
            raise TypeError(
                f"claim {id}: its verdict was not produced by a check of causalbandits_lib.core.checks (it keeps no "
                "inputs, so no record could judge it again)"
            )
        if kind in RESULT_KINDS and uses_check(result.evidence(), "check_all"):
            raise ValueError(
                f"claim {id}: a result ({kind}) judged by check_all over booleans; judge it by a check that reports "
                "a measured margin and its uncertainty, or declare it an identity or a construction"
            )
        self._check_margins(id, result.evidence())
        missing = self._stand_ins_about(datasets)
        if missing:
            result = on_stand_in(result, missing)
        if not id.startswith(self.chapter + "."):
            raise ValueError(f"claim id {id!r} must start with the chapter name {self.chapter!r}")
        if any(c.id == id for c in self.claims):
            raise ValueError(f"claim {id!r} is registered twice")
        claim = Claim.from_verdict(
            id,
            statement,
            paper_value,
            measured,
            result,
            source=source,
            section=section,
            kind=kind,
            ours=True if ours else None,
            reconstructed=True if reconstructed else None,
        )
        if self.profile == "paper" and needs_diagnosis(claim.to_dict()):
            found = diagnosis_for(id, load_diagnoses(self.chapter))
            if found is not None:
                claim = dataclasses.replace(claim, diagnosis=found.to_dict())
        self.claims.append(claim)
        return claim

    def _stand_ins_about(self, datasets: Sequence[str] | None) -> list[str]:
        """The stand-ins a claim's measurement read: by default every stand-in of a real data set
        read in this execution so far (never chosen by the words of the statement); with
        ``datasets``, those it names that were read as stand-ins, or not read as real data while a
        stand-in was. Every source a loader declared since the session started joins the record
        (:func:`~causalbandits_lib.core.datasets.undeclared_in`)."""
        from ..core.datasets import undeclared_in

        self.data.extend(to_jsonable(p) for p in undeclared_in(self.data, self._started))
        if datasets is None:
            return replaceable_stand_ins(self.data)
        if isinstance(datasets, str):
            raise TypeError(f"datasets={datasets!r}: give a list of data set names, such as [{datasets!r}]")
        real = {str(d.get("name")) for d in self.data if not d.get("stand_in")}
        stand_ins = {str(d.get("name")) for d in self.data if d.get("stand_in")}
        return [n for n in datasets if n in stand_ins or (stand_ins and n not in real)]

    def use_dataset(self, provenance: Mapping[str, Any]) -> None:
        """Pin a data set in the record (checksums, whether a stand-in was used). A stand-in is
        announced on the page as a warning box in the book's words (the library's
        ``StandInWarning`` is not printed raw in a notebook session)."""
        if (
            provenance.get("stand_in")
            and replaceable_stand_ins([provenance])
            and os.environ.get(PUBLISH_ENV) == "1"
            and os.environ.get(ALLOW_STAND_IN_ENV) != "1"
        ):
            raise StandInRefused(
                f"{self.spec.id}: the book is not published on a synthetic stand-in for the "
                f"{provenance.get('name')!r} data set (its real files were not found: put them under data/, "
                f"see data/README.md, or set CAUSALBANDITS_DATA_DIR); ALLOW_STAND_IN=1 publishes the "
                "page on the stand-in, with its warning box"
            )
        from ..core.datasets import same_source

        self._stand_ins_about([])  # the sources its loaders declared join the record first
        entry = to_jsonable(dict(provenance))
        same = [i for i, d in enumerate(self.data) if same_source(d, entry)]
        if same:  # declared by its loader already: the notebook's own description replaces it in place
            self.data[same[0]] = entry
        else:
            self.data.append(entry)
        if provenance.get("stand_in"):
            import re

            reason = re.sub(r"(?<![\w.])/\S*/", "", str(provenance.get("reason", "")))  # no folder of this machine
            _display_html(
                '<div class="admonition warning"><p class="admonition-title">Synthetic stand-in data</p>'
                f"<p>The real <code>{provenance.get('name')}</code> data set was not used ({reason}). This page "
                f"runs on {provenance.get('description', 'a synthetic stand-in')}; its claims about that data "
                "set are <em>not testable here</em>.</p></div>",
                f"WARNING: synthetic stand-in for {provenance.get('name')} ({reason})",
            )

    @contextlib.contextmanager
    def timed(self, section: str) -> Iterator[None]:
        """Time a block; the seconds are stored under ``timings.sections`` of the record."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.sections[section] = self.sections.get(section, 0.0) + time.perf_counter() - start

    # -- output -----------------------------------------------------------------------------
    def record(self) -> dict[str, Any]:
        """The record as a dict (without its content hash)."""
        root = paths.book_root()
        return {
            "notebook": self.id,
            "title": self.spec.title,
            "profile": self.profile,
            "parameters": dict(self.params),
            "parameter_sources": self.sources,
            "seeds": {"root": self.seed, "scheme": SEED_SCHEME},
            "git": git_info(root),
            "library": library_fingerprint(),
            "versions": package_versions(),
            "platform": platform_info(),
            "data": self.data,
            "timings": {
                "started": self._started_wall.isoformat(timespec="seconds"),
                "finished": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                "wall_seconds": round(time.perf_counter() - self._started, 3),
                "sections": {k: round(v, 3) for k, v in self.sections.items()},
                "simulations": work_by_pair(self.work),
            },
            "metrics": self.metrics,
            "curves": self.curves,
            "claims": [c.to_dict() for c in self.claims],
        }

    def record_dir(self) -> Path:
        env = os.environ.get(RECORD_DIR_ENV)
        return Path(env) if env else paths.default_record_dir(self.profile)

    def finish(self, show: bool = True) -> Path:
        """Write the record atomically and show the claims table. Returns the record's path."""
        path = self.record_dir() / self.chapter / f"{self.spec.name}.json"
        self.record_path = write_record(self.record(), path)
        if show:
            _display_markdown(self.claims_table())
            shown_as = os.environ.get(RECORD_SHOWN_AS_ENV)
            if shown_as:
                # under `causalbandits run` the record is written to a staging folder and moved into
                # place once the execution has been checked: name the place it will be found. (A
                # book page built from such a copy drops it: the notebooks tag this cell
                # remove-stdout.)
                print(f"record written to {_shown_path(Path(shown_as))}")
            else:  # in the book: the page's evidence (its paper-scale record), not a build folder
                self.show_downloads()
        return self.record_path

    def record_link(self) -> str:
        """The page-relative address of this page's paper-scale record in the built site (copied
        there by ``sphinx_downloads``)."""
        from .sphinx_downloads import download_links

        up = "../" * (len(Path("notebooks", self.chapter, self.spec.name).parts) - 1)
        return up + download_links(self.chapter, self.spec.name)["paper-scale record"]

    def show_downloads(self) -> None:
        """Links to this page's evidence in the built site: its executed notebook, its paper-scale
        record, and its source in the repository (copied there by ``sphinx_downloads``)."""
        from .sphinx_downloads import download_links

        up = "../" * (len(Path("notebooks", self.chapter, self.spec.name).parts) - 1)
        links = [
            f'<a href="{up}{target}" download>{what}</a>'
            for what, target in download_links(self.chapter, self.spec.name).items()
        ]
        _display_html(
            '<p class="page-evidence">Evidence for this page: ' + " · ".join(links) + "</p>",
            "downloads: " + ", ".join(download_links(self.chapter, self.spec.name).values()),
        )

    def run_label(self) -> str:
        """How this execution is labelled beside paper-scale verdicts: its profile, and the
        parameters given on top of it that differ from the profile's values."""
        declared = self.spec.all_parameters()
        given = [
            f"{k}={format_value(v)}"
            for k, v in self.params.items()
            if k != "profile" and self.sources.get(k) == "given" and v != declared[k].default(self.profile)
        ]
        return f"{self.profile} profile" + (f", with {', '.join(given)}" if given else "")

    def claims_table(self) -> str:
        """The page's one table of claims, one verdict per claim.

        At the paper profile: this run's claims. Below it, when a paper-scale record exists: the
        paper-scale verdicts as the verdicts, and this run's verdicts in a labelled column with
        differences marked (the reproducibility page and a citation use the paper-scale ones).
        """
        mine = [c.to_dict() for c in self.claims]
        pr = None if self.profile == "paper" else self.paper_results()
        if pr is None:
            counts = {v: sum(c["verdict"] == v for c in mine) for v in VERDICTS}
            summary = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
            note = "" if self.profile == "paper" else " (this run; no paper-scale record yet)"
            return claims_markdown(mine) + f"\n\n{len(mine)} claims{note}: {summary or 'none'}."
        paper = pr.record["claims"]
        counts = {v: sum(c["verdict"] == v for c in paper) for v in VERDICTS}
        summary = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
        by_id = {c["id"]: c["verdict"] for c in paper}
        differ = sum(1 for c in mine if c["id"] in by_id and by_id[c["id"]] != c["verdict"])
        stale = " **The library changed since that record (see the warning above).**" if pr.stale else ""
        return (
            claims_markdown(paper, page_run=mine, page_label=self.run_label(), record_link=self.record_link())
            + f"\n\nVerdicts are those of the paper-scale record `{pr.path.name}`: {len(paper)} claims, "
            + f"{summary or 'none'}.{stale} This page's own run ({self.run_label()}) differs on "
            + f"{differ} of {len(mine)}."
        )

    # -- paper-scale results ----------------------------------------------------------------
    def paper_results(self) -> "PaperResults | None":
        """The committed paper-profile record of this notebook, or None if there is none yet."""
        path = paths.paper_results_dir() / self.chapter / f"{self.spec.name}.json"
        if not path.is_file():
            return None
        return PaperResults(merge_sensitivity(load_record(path), path), path)

    def show_paper_results(self) -> "PaperResults | None":
        """When this execution is smaller than the paper's scale, show the committed paper-scale
        claims, the commit and date they came from, and a visible warning if the library code they
        ran has changed since. Returns the :class:`PaperResults` (None if not shown)."""
        if self.profile == "paper":
            _display_markdown("This execution is at the paper's scale; its own results are above.")
            return None
        pr = self.paper_results()
        if pr is None:
            _display_html(
                '<div class="admonition warning"><p class="admonition-title">No paper-scale record yet</p>'
                f"<p>Run <code>make reproduce CHAPTER={self.chapter}</code> to create it.</p></div>",
                "WARNING: no paper-scale record yet",
            )
            return None
        pr.show(self.choices_unlike(pr.record))
        return pr

    def choices_unlike(self, record: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
        """The parameters this execution was given (beyond its profile) whose values differ from
        ``record``'s: ``{name: (here, in the record)}``. The profile's own values (T, runs) are
        not counted: a page below the paper's scale differs from the record in those by design."""
        theirs = record["parameters"]
        return {
            k: (v, theirs.get(k))
            for k, v in to_jsonable(dict(self.params)).items()
            if k != "profile" and self.sources.get(k) == "given" and theirs.get(k) != v
        }


def _shown_path(path: Path) -> str:
    """A path as a page shows it: relative to the book's root when it lies inside (no folder of the
    machine that built the page), else as given (a ``--out`` folder the user chose)."""
    try:
        return path.resolve().relative_to(paths.book_root()).as_posix()
    except ValueError:
        return str(path)


class PaperResults:
    """A committed paper-profile record, with a check that the library has not changed since."""

    def __init__(self, record: dict[str, Any], path: Path):
        self.record = record
        self.path = path

    @property
    def stale(self) -> bool:
        """True if any library module the record ran has different source now."""
        return bool(self.changed_modules())

    def changed_modules(self) -> list[str]:
        """Library modules whose source differs from the code that produced the record."""
        now = library_fingerprint(self.record["library"]["modules"])["modules"]
        return sorted(m for m, h in self.record["library"]["modules"].items() if now.get(m) != h)

    def show(self, unlike: Mapping[str, tuple[Any, Any]] | None = None) -> None:
        """Say where the paper-scale results come from; with ``unlike`` (the page's given parameters
        that differ from the record's), say plainly that the record is of another setting."""
        rec = self.record
        git = rec["git"]
        commit = (git.get("commit") or "unknown")[:10]
        date = git.get("commit_date") or rec["timings"]["started"]
        dirty = " (working tree had uncommitted changes)" if git.get("dirty") else ""
        head = (
            f"**Paper-scale results** (profile `paper`, record `{self.path.name}`): commit `{commit}`{dirty}, "
            f"{date}; ran {rec['timings']['wall_seconds']:.0f} s with parameters "
            + ", ".join(f"`{k}={format_value(v)}`" for k, v in rec["parameters"].items() if k != "profile")
        )
        if self.stale:
            mods = ", ".join(self.changed_modules())
            _display_html(
                '<div class="admonition warning"><p class="admonition-title">Library changed since these results</p>'
                f"<p>Module(s) {mods} differ from the code that produced this record (commit {commit}). "
                "Re-run <code>make reproduce</code> before citing them.</p></div>",
                f"WARNING: library changed since the paper-scale record ({mods})",
            )
        if unlike:
            shown = "; ".join(
                f"`{k}` is {format_value(a)} here, {format_value(b)} in the record" for k, (a, b) in unlike.items()
            )
            _display_html(
                '<div class="admonition warning"><p class="admonition-title">This page ran with other parameters</p>'
                f"<p>{shown}. The paper-scale curves, numbers and verdicts shown on this page are of the record's "
                "setting, not of this page's; compare them with this page's own results only as such.</p></div>",
                f"WARNING: this page's parameters differ from the paper-scale record's ({shown})",
            )
        _display_markdown(
            head + f". Its {len(rec['claims'])} verdicts are the verdicts of this page: they are in the claims "
            "table at the end, beside this page's own smaller run."
        )

    def plot(self, ax, name: str, label: str | None = None, **kw):
        """Draw a stored curve (mean over runs with its 5-95% band) on ``ax``."""
        from ..core.figures import band_from_summary

        return band_from_summary(ax, self.curve(name), label or name, **kw)

    def metric(self, name: str):
        """A stored metric."""
        try:
            return self.record["metrics"][name]
        except KeyError:
            raise KeyError(
                f"the paper-scale record has no metric {name!r}; it has {sorted(self.record['metrics'])}"
            ) from None

    def curve(self, name: str) -> dict[str, list]:
        """A stored curve (``t``, ``mean``, ``sd``, ``q05``, ``q95``)."""
        try:
            return self.record["curves"][name]
        except KeyError:
            raise KeyError(
                f"the paper-scale record has no curve {name!r}; it has {sorted(self.record['curves'])}"
            ) from None
