"""Notebook parameters: declared once, resolved by profile, validated where they enter.

Every notebook's knobs are declared in ``notebooks/<chapter>/parameters.yml``. Each knob has a type,
an allowed range or set of choices, a help text, and a value for each of the three profiles
(``smoke``: seconds, for CI; ``book``: what the published book runs; ``paper``: the paper's scale).
A knob whose value is the same in every profile gives it once as ``value``.

The file format::

    title: Primer
    notebooks:
      01_bandits_and_regret:
        title: Stochastic bandits and regret
        parameters:
          T:
            type: int
            min: 1
            max: 10000000
            help: horizon (rounds per run)
            smoke: 300
            book: 20000
            paper: 100000

Every notebook also takes ``profile`` (one of :data:`PROFILES`) and ``seed`` (an integer
``0 <= seed < 2**63``); they are not declared in the file. papermill injects parameters without
checking them, so :meth:`NotebookSpec.resolve` is the only guard: it names the parameter, the value
and what is allowed whenever something is wrong.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

#: The three execution profiles, from fastest to largest.
PROFILES = ("smoke", "book", "paper")

#: The types a parameter may have.
TYPES = ("int", "float", "bool", "str", "list[int]", "list[float]", "list[str]")

SEED_MAX = 2**63 - 1


class ParameterError(ValueError):
    """A parameter is unknown, of the wrong type, or outside what is allowed."""


class SpecError(ValueError):
    """A ``parameters.yml`` file is malformed."""


def _type_name(value: Any) -> str:
    return type(value).__name__


@dataclass(frozen=True)
class Parameter:
    """One declared knob of a notebook.

    Parameters
    ----------
    name : str
        The variable name in the notebook's ``parameters`` cell.
    type : str
        One of :data:`TYPES`.
    help : str
        What the knob means, with its unit.
    profiles : dict
        Value for each profile in :data:`PROFILES`.
    min, max : float, optional
        Inclusive bounds (for lists: bounds of every element).
    gt, lt : float, optional
        Exclusive bounds.
    choices : list, optional
        The allowed values (for lists: of every element).
    length : tuple of int, optional
        Inclusive bounds on the length of a list.
    ours : bool
        The paper left this choice open and the value is ours (``ours: true`` in the file).
    alternatives : tuple
        Other plausible values of an open choice (``alternatives: [...]``, only with ``ours: true``):
        every claim of the notebook is also judged under each (``causalbandits sensitivity``).
    """

    name: str
    type: str
    help: str
    profiles: dict[str, Any]
    min: float | None = None
    max: float | None = None
    gt: float | None = None
    lt: float | None = None
    choices: tuple | None = None
    length: tuple[int, int] | None = None
    ours: bool = False
    alternatives: tuple = ()

    # -- description -------------------------------------------------------------------------
    def allowed(self) -> str:
        """Plain-language statement of the allowed values."""
        element = self.type[5:-1] if self.type.startswith("list[") else self.type
        noun = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "a string"}[element]
        parts = []
        if self.choices is not None:
            parts.append("one of " + ", ".join(repr(c) for c in self.choices))
        lo = f"{_num(self.min)} <= " if self.min is not None else (f"{_num(self.gt)} < " if self.gt is not None else "")
        hi = f" <= {_num(self.max)}" if self.max is not None else (f" < {_num(self.lt)}" if self.lt is not None else "")
        if lo or hi:
            parts.append(f"{lo}{self.name if not self.type.startswith('list') else 'x'}{hi}")
        text = noun + (" with " + " and ".join(parts) if parts else "")
        if self.type.startswith("list["):
            plural = text
            for one, many in (("an integer", "integers"), ("a number", "numbers"), ("a string", "strings")):
                plural = plural.replace(one, many)
            text = f"a list of {plural}"
            if self.length is not None:
                text += f" of length {self.length[0]} to {self.length[1]}"
            if parts:
                text = text.replace(" with ", " each with ", 1)
        return text

    # -- validation --------------------------------------------------------------------------
    def _check_scalar(self, value: Any, element: str, where: str) -> Any:
        if element == "bool":
            if not isinstance(value, bool):
                raise ParameterError(
                    f"parameter {where} = {value!r} ({_type_name(value)}): allowed is {self.allowed()}"
                )
            return value
        if element == "str":
            if not isinstance(value, str):
                raise ParameterError(
                    f"parameter {where} = {value!r} ({_type_name(value)}): allowed is {self.allowed()}"
                )
        elif element == "int":
            if isinstance(value, bool) or not isinstance(value, (int,)) and not _is_integral_float(value):
                raise ParameterError(
                    f"parameter {where} = {value!r} ({_type_name(value)}): allowed is {self.allowed()}"
                )
            value = int(value)
        elif element == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ParameterError(
                    f"parameter {where} = {value!r} ({_type_name(value)}): allowed is {self.allowed()}"
                )
            value = float(value)
            if not math.isfinite(value):
                raise ParameterError(f"parameter {where} = {value!r} is not finite: allowed is {self.allowed()}")
        if self.choices is not None and value not in self.choices:
            raise ParameterError(f"parameter {where} = {value!r} is not allowed: allowed is {self.allowed()}")
        if element in ("int", "float"):
            if (
                (self.min is not None and value < self.min)
                or (self.max is not None and value > self.max)
                or (self.gt is not None and value <= self.gt)
                or (self.lt is not None and value >= self.lt)
            ):
                raise ParameterError(f"parameter {where} = {value!r} is out of range: allowed is {self.allowed()}")
        return value

    def validate(self, value: Any) -> Any:
        """Return ``value`` converted to the declared type, or raise :class:`ParameterError`."""
        if self.type.startswith("list["):
            element = self.type[5:-1]
            if isinstance(value, tuple):
                value = list(value)
            if not isinstance(value, list):
                raise ParameterError(
                    f"parameter {self.name} = {value!r} ({_type_name(value)}): allowed is {self.allowed()}"
                )
            if self.length is not None and not self.length[0] <= len(value) <= self.length[1]:
                raise ParameterError(f"parameter {self.name} has {len(value)} elements: allowed is {self.allowed()}")
            return [self._check_scalar(v, element, f"{self.name}[{i}]") for i, v in enumerate(value)]
        return self._check_scalar(value, self.type, self.name)

    def default(self, profile: str) -> Any:
        """The value of this knob in ``profile``."""
        return self.profiles[profile]


def _num(x: float) -> str:
    """A bound as written by a person: integers in full (10000000, not 1e+07)."""
    if float(x).is_integer():
        return str(int(x))
    return f"{x:g}"


def _is_integral_float(value: Any) -> bool:
    return isinstance(value, float) and value.is_integer()


PROFILE_PARAMETER = Parameter(
    name="profile",
    type="str",
    help="execution scale: smoke (seconds, CI), book (the published book), paper (the paper's scale)",
    profiles={p: p for p in PROFILES},
    choices=PROFILES,
)

SEED_PARAMETER = Parameter(
    name="seed",
    type="int",
    help="root seed; every random stream of the notebook is derived from it through SeedSequence",
    profiles={p: 0 for p in PROFILES},
    min=0,
    max=SEED_MAX,
)

COMMON = {"profile": PROFILE_PARAMETER, "seed": SEED_PARAMETER}


@dataclass(frozen=True)
class NotebookSpec:
    """The declared parameters of one notebook (``chapter/name``)."""

    chapter: str
    name: str
    title: str
    parameters: dict[str, Parameter] = field(default_factory=dict)
    constraints: tuple["Constraint", ...] = ()

    @property
    def id(self) -> str:
        return f"{self.chapter}/{self.name}"

    def open_choices(self) -> dict[str, Parameter]:
        """The knobs marked ``ours: true`` that list alternatives, in declaration order."""
        return {k: p for k, p in self.parameters.items() if p.ours and p.alternatives}

    def all_parameters(self) -> dict[str, Parameter]:
        """``profile``, ``seed`` and the declared knobs, in that order."""
        return {**COMMON, **self.parameters}

    def resolve(self, given: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        """Validate ``given`` and fill in profile defaults.

        Parameters
        ----------
        given : mapping
            Parameter values as set in the notebook or on the command line. ``None`` means "the
            value of the chosen profile".

        Returns
        -------
        values : dict
            Every parameter, validated, in declaration order.
        sources : dict
            For each parameter, ``"given"`` or ``"profile"``.

        Raises
        ------
        ParameterError
            For an unknown name, a wrong type or a value outside what is allowed.
        """
        declared = self.all_parameters()
        unknown = [k for k in given if k not in declared]
        if unknown:
            names = ", ".join(declared)
            raise ParameterError(
                f"unknown parameter {unknown[0]!r} (value {given[unknown[0]]!r}) for notebook {self.id}: "
                f"allowed names are {names}"
            )
        profile_value = given.get("profile")
        profile = PROFILE_PARAMETER.validate("book" if profile_value is None else profile_value)
        values: dict[str, Any] = {}
        sources: dict[str, str] = {}
        for name, param in declared.items():
            value = given.get(name)
            if value is None:
                values[name] = param.validate(param.default(profile))
                sources[name] = "profile"
            else:
                values[name] = param.validate(value)
                sources[name] = "given"
        for constraint in self.constraints:
            constraint.check(values, self.id)
        return values, sources


CONSTRAINT_FORMS = ("A in B", "unique max A", "distinct A", "A < B", "A <= B")


@dataclass(frozen=True)
class Constraint:
    """A rule between parameters, declared under a notebook's ``constraints:`` in ``parameters.yml``
    and checked whenever its parameters are resolved (so before anything runs, exit code 2):

    - ``A in B``: the value of ``A`` is one of the elements of the list ``B``;
    - ``unique max A``: the largest element of the list ``A`` occurs once (a unique best arm);
    - ``distinct A``: the elements of the list ``A`` are pairwise different;
    - ``A < B``, ``A <= B``: between two numbers.
    """

    text: str
    form: str
    names: tuple[str, ...]

    @classmethod
    def parse(cls, where: str, text: Any, declared: Mapping[str, Parameter]) -> "Constraint":
        words = str(text).split()
        if len(words) == 3 and words[1] in ("in", "<", "<="):
            form, names = words[1], (words[0], words[2])
        elif len(words) == 3 and words[:2] == ["unique", "max"]:
            form, names = "unique max", (words[2],)
        elif len(words) == 2 and words[0] == "distinct":
            form, names = "distinct", (words[1],)
        else:
            raise SpecError(f"{where}: {text!r} is not a constraint; allowed forms are {', '.join(CONSTRAINT_FORMS)}")
        for n in names:
            if n not in declared:
                raise SpecError(f"{where}: constraint {text!r} names unknown parameter {n!r}")
        lists = {"in": names[1:], "unique max": names, "distinct": names}.get(form, ())
        for n in lists:
            if not declared[n].type.startswith("list["):
                raise SpecError(f"{where}: constraint {text!r} needs a list parameter, {n!r} is {declared[n].type}")
        return cls(str(text), form, names)

    def check(self, values: Mapping[str, Any], notebook: str) -> None:
        v = [values[n] for n in self.names]
        shown = [f"{n} = {x!r}" for n, x in zip(self.names, v)]
        if self.form == "in" and v[0] not in v[1]:
            problem = f"{shown[0]} must be one of {shown[1]}"
        elif self.form == "unique max" and v[0] and sum(x == max(v[0]) for x in v[0]) > 1:
            problem = f"the largest value of {shown[0]} must be unique (it occurs {v[0].count(max(v[0]))} times)"
        elif self.form == "distinct" and len(set(v[0])) < len(v[0]):
            problem = f"the values of {shown[0]} must be pairwise different"
        elif self.form == "<" and not v[0] < v[1]:
            problem = f"{shown[0]} must be less than {shown[1]}"
        elif self.form == "<=" and not v[0] <= v[1]:
            problem = f"{shown[0]} must be at most {shown[1]}"
        else:
            return
        raise ParameterError(f"{notebook}: {problem} (constraint '{self.text}' of parameters.yml)")


@dataclass(frozen=True)
class ChapterSpec:
    """A chapter: its folder name, title and notebooks in reading order."""

    name: str
    title: str
    notebooks: dict[str, NotebookSpec]
    folder: Path


def _parse_parameter(where: str, name: str, raw: Any) -> Parameter:
    if not isinstance(raw, dict):
        raise SpecError(f"{where}: parameter {name!r} must be a mapping, got {raw!r}")
    if name in COMMON:
        raise SpecError(f"{where}: {name!r} is common to every notebook and must not be declared")
    if not name.isidentifier():
        raise SpecError(f"{where}: parameter name {name!r} is not a Python identifier")
    known = {"type", "help", "min", "max", "gt", "lt", "choices", "length", "value", "ours", "alternatives", *PROFILES}
    extra = set(raw) - known
    if extra:
        raise SpecError(
            f"{where}: parameter {name!r} has unknown keys {sorted(extra)}; allowed keys are {sorted(known)}"
        )
    ptype = raw.get("type")
    if ptype not in TYPES:
        raise SpecError(f"{where}: parameter {name!r} has type {ptype!r}; allowed types are {', '.join(TYPES)}")
    if not raw.get("help"):
        raise SpecError(f"{where}: parameter {name!r} needs a help text")
    if "value" in raw:
        if any(p in raw for p in PROFILES):
            raise SpecError(f"{where}: parameter {name!r} gives both 'value' and per-profile values")
        profiles = {p: raw["value"] for p in PROFILES}
    else:
        missing = [p for p in PROFILES if p not in raw]
        if missing:
            raise SpecError(f"{where}: parameter {name!r} has no value for profile(s) {missing} (or give 'value')")
        profiles = {p: raw[p] for p in PROFILES}
    length = raw.get("length")
    if length is not None:
        length = tuple(int(x) for x in length)
    choices = raw.get("choices")
    ours = raw.get("ours", False)
    if not isinstance(ours, bool):
        raise SpecError(f"{where}: parameter {name!r} has ours={ours!r}; allowed are true and false")
    alternatives = raw.get("alternatives", [])
    if alternatives and not ours:
        raise SpecError(f"{where}: parameter {name!r} lists alternatives but is not marked 'ours: true'")
    if not isinstance(alternatives, list):
        raise SpecError(f"{where}: parameter {name!r} has alternatives={alternatives!r}; give a list of values")
    param = Parameter(
        name=name,
        type=ptype,
        help=str(raw["help"]).strip(),
        profiles=profiles,
        min=raw.get("min"),
        max=raw.get("max"),
        gt=raw.get("gt"),
        lt=raw.get("lt"),
        choices=tuple(choices) if choices is not None else None,
        length=length,
        ours=ours,
    )
    for profile, value in profiles.items():
        try:
            param.validate(value)
        except ParameterError as exc:
            raise SpecError(f"{where}: the {profile} value of {name!r} is invalid: {exc}") from None
    checked = []
    for i, value in enumerate(alternatives):
        try:
            value = param.validate(value)
        except ParameterError as exc:
            raise SpecError(f"{where}: alternative {i} of {name!r} is invalid: {exc}") from None
        if value in profiles.values() or value in checked:
            raise SpecError(f"{where}: alternative {value!r} of {name!r} repeats a profile value or an alternative")
        checked.append(value)
    return dataclasses.replace(param, alternatives=tuple(checked))


def load_chapter(folder: Path) -> ChapterSpec:
    """Read ``folder/parameters.yml``.

    Raises
    ------
    SpecError
        If the file is missing, malformed, or declares a notebook that has no ``.md`` file.
    """
    path = folder / "parameters.yml"
    if not path.is_file():
        raise SpecError(f"chapter {folder.name!r} has no parameters.yml at {path}")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise SpecError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("notebooks"), dict) or "title" not in raw:
        raise SpecError(f"{path}: expected a mapping with 'title' and 'notebooks'")
    notebooks: dict[str, NotebookSpec] = {}
    for nb_name, nb_raw in raw["notebooks"].items():
        where = f"{path}: notebook {nb_name!r}"
        if not (folder / f"{nb_name}.md").is_file():
            raise SpecError(f"{where} has no file {nb_name}.md in {folder}")
        nb_raw = nb_raw or {}
        params_raw = nb_raw.get("parameters") or {}
        params = {name: _parse_parameter(where, name, p) for name, p in params_raw.items()}
        raw_constraints = nb_raw.get("constraints") or []
        if not isinstance(raw_constraints, list):
            raise SpecError(f"{where}: 'constraints' must be a list of rules like 'fig_tau in taus'")
        declared = {**COMMON, **params}
        constraints = tuple(Constraint.parse(where, c, declared) for c in raw_constraints)
        notebooks[nb_name] = NotebookSpec(
            chapter=folder.name,
            name=nb_name,
            title=str(nb_raw.get("title", nb_name)),
            parameters=params,
            constraints=constraints,
        )
    return ChapterSpec(
        name=folder.name, title=str(raw["title"]), notebooks=dict(sorted(notebooks.items())), folder=folder
    )


def load_all(notebooks_root: Path) -> dict[str, ChapterSpec]:
    """Every chapter under ``notebooks_root`` that has a ``parameters.yml``, in folder order."""
    chapters = {}
    for folder in sorted(p for p in notebooks_root.iterdir() if p.is_dir()):
        if (folder / "parameters.yml").is_file():
            chapters[folder.name] = load_chapter(folder)
    return chapters


#: The literal forms ``-p name=value`` accepts, by element type (nothing else: no YAML, so no
#: ``0x10``, ``1_000``, ``010``, ``yes``, ``1.0`` for an integer, nor spaces around the value).
_LITERALS = {
    "int": (re.compile(r"-?(0|[1-9][0-9]*)"), "an integer in decimal digits (like 500 or -3)"),
    "float": (
        re.compile(r"-?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?"),
        "a decimal number (like 0.25, 3 or 1e-3)",
    ),
    "bool": (re.compile(r"true|false|True|False"), "true or false"),
}


def _literal(param: Parameter, element: str, text: str, where: str) -> Any:
    """One scalar of ``-p``, in its documented literal form, or :class:`ParameterError`."""
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise ParameterError(
            f"parameter {where} = {text!r} contains a control character (a newline?): allowed is {param.allowed()}"
        )
    if text != text.strip() or not text:
        raise ParameterError(
            f"parameter {where} = {text!r}: "
            + ("an empty value" if not text.strip() else "spaces around the value are not allowed")
            + f"; allowed is {param.allowed()}"
        )
    if element == "str":
        return text
    pattern, form = _LITERALS[element]
    if not pattern.fullmatch(text):
        raise ParameterError(f"parameter {where} = {text!r} (str): not written as {form}; allowed is {param.allowed()}")
    if element == "int":
        return int(text)
    if element == "float":
        return float(text)
    return text in ("true", "True")


def parse_cli_value(param: Parameter, text: str) -> Any:
    """Parse the text of ``-p name=value`` in its literal form, then validate it against ``param``.

    The forms: an integer in decimal digits (``500``, ``-3``); a number as a decimal (``0.25``,
    ``3``, ``1e-3``); ``true`` or ``false``; a string as it is; a list as ``[a,b]`` (or ``a,b``),
    its elements in those forms, spaces after the commas allowed. Anything else (``0x10``,
    ``1_000``, ``1.0`` for an integer, ``yes``, spaces around the value, a newline) is refused with
    a :class:`ParameterError` naming the parameter, the value and what is allowed.
    """
    if not param.type.startswith("list["):
        return param.validate(_literal(param, param.type, text, param.name))
    element = param.type[5:-1]
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise ParameterError(
            f"parameter {param.name} = {text!r} contains a control character (a newline?): allowed is {param.allowed()}"
        )
    if text != text.strip():
        raise ParameterError(
            f"parameter {param.name} = {text!r}: spaces around the value are not allowed; allowed is {param.allowed()}"
        )
    inner = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    if "[" in inner or "]" in inner:
        raise ParameterError(
            f"parameter {param.name} = {text!r} is not written as a list [a,b] (or a,b): allowed is {param.allowed()}"
        )
    items = [] if not inner.strip() else [item.strip() for item in inner.split(",")]
    value = [_literal(param, element, item, f"{param.name}[{i}]") for i, item in enumerate(items)]
    return param.validate(value)
