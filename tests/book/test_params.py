"""Parameters: declaration, profile resolution and the error messages a user sees."""

from __future__ import annotations

import textwrap

import pytest

from causalbandits_lib.book.params import Parameter, ParameterError, SpecError, load_all, load_chapter, parse_cli_value


def make_chapter(tmp_path, body: str, notebooks=("01_a",)):
    folder = tmp_path / "ch"
    folder.mkdir()
    for nb in notebooks:
        (folder / f"{nb}.md").write_text("# x\n")
    (folder / "parameters.yml").write_text(textwrap.dedent(body))
    return folder


GOOD = """
title: Chapter
notebooks:
  01_a:
    title: A
    parameters:
      T:
        type: int
        min: 1
        max: 1000
        help: horizon
        smoke: 10
        book: 100
        paper: 1000
      taus:
        type: list[float]
        gt: 0
        max: 1
        length: [1, 5]
        help: thresholds
        value: [0.1, 0.2]
      mode:
        type: str
        choices: [paper, diff]
        help: radius
        value: paper
"""


def test_profiles_resolve(tmp_path):
    spec = load_chapter(make_chapter(tmp_path, GOOD)).notebooks["01_a"]
    values, sources = spec.resolve({"profile": "smoke"})
    assert values == {"profile": "smoke", "seed": 0, "T": 10, "taus": [0.1, 0.2], "mode": "paper"}
    assert sources["T"] == "profile" and sources["profile"] == "given"
    values, _ = spec.resolve({"T": None})
    assert values["profile"] == "book" and values["T"] == 100
    values, sources = spec.resolve({"T": 7, "profile": "paper"})
    assert values["T"] == 7 and sources["T"] == "given"


@pytest.mark.parametrize(
    "given, fragment",
    [
        ({"T": -5}, "parameter T = -5 is out of range: allowed is an integer with 1 <= T <= 1000"),
        ({"T": 2.5}, "parameter T = 2.5 (float)"),
        ({"T": True}, "parameter T = True (bool)"),
        ({"T": "10"}, "parameter T = '10' (str)"),
        ({"taus": [0.1, 0.0]}, "parameter taus[1] = 0.0 is out of range"),
        ({"taus": []}, "parameter taus has 0 elements"),
        ({"mode": "other"}, "parameter mode = 'other' is not allowed: allowed is a string with one of 'paper', 'diff'"),
        ({"profile": "huge"}, "parameter profile = 'huge' is not allowed"),
        ({"seed": -1}, "parameter seed = -1 is out of range"),
        (
            {"Tx": 3},
            "unknown parameter 'Tx' (value 3) for notebook ch/01_a: allowed names are profile, seed, T, taus, mode",
        ),
    ],
)
def test_bad_values_name_parameter_value_and_allowed(tmp_path, given, fragment):
    spec = load_chapter(make_chapter(tmp_path, GOOD)).notebooks["01_a"]
    with pytest.raises(ParameterError) as err:
        spec.resolve(given)
    assert fragment in str(err.value)


def test_integral_float_is_accepted_as_int(tmp_path):
    spec = load_chapter(make_chapter(tmp_path, GOOD)).notebooks["01_a"]
    assert spec.resolve({"T": 20.0})[0]["T"] == 20


@pytest.mark.parametrize(
    "body, fragment",
    [
        (
            "title: x\nnotebooks:\n  01_a:\n    parameters:\n      T: {type: int, help: h, smoke: 1, book: 2}\n",
            "no value for profile(s) ['paper']",
        ),
        (
            "title: x\nnotebooks:\n  01_a:\n    parameters:\n      T: {type: integer, help: h, value: 1}\n",
            "has type 'integer'",
        ),
        ("title: x\nnotebooks:\n  01_a:\n    parameters:\n      T: {type: int, value: 1}\n", "needs a help text"),
        (
            "title: x\nnotebooks:\n  01_a:\n    parameters:\n      T: {type: int, help: h, min: 5, value: 1}\n",
            "the smoke value of 'T' is invalid",
        ),
        ("title: x\nnotebooks:\n  01_b:\n    parameters: {}\n", "has no file 01_b.md"),
        (
            "title: x\nnotebooks:\n  01_a:\n    parameters:\n      seed: {type: int, help: h, value: 1}\n",
            "common to every notebook",
        ),
        (
            "title: x\nnotebooks:\n  01_a:\n    parameters:\n      T: {type: int, help: h, value: 1, maxx: 3}\n",
            "unknown keys ['maxx']",
        ),
        ("title: [unclosed\n", "not valid YAML"),
    ],
)
def test_malformed_spec_is_rejected(tmp_path, body, fragment):
    with pytest.raises(SpecError) as err:
        load_chapter(make_chapter(tmp_path, body))
    assert fragment in str(err.value)


def test_parse_cli_value():
    T = Parameter("T", "int", "h", {"smoke": 1, "book": 1, "paper": 1}, min=1)
    assert parse_cli_value(T, "500") == 500
    with pytest.raises(ParameterError, match="out of range"):
        parse_cli_value(T, "-5")
    taus = Parameter("taus", "list[float]", "h", {p: [0.1] for p in ("smoke", "book", "paper")})
    assert parse_cli_value(taus, "0.1,0.3") == [0.1, 0.3]
    assert parse_cli_value(taus, "[0.5]") == [0.5]
    assert parse_cli_value(taus, "[1, 2]") == [1.0, 2.0]
    mode = Parameter("mode", "str", "h", {p: "a" for p in ("smoke", "book", "paper")})
    assert parse_cli_value(mode, "123") == "123"
    flag = Parameter("flag", "bool", "h", {p: False for p in ("smoke", "book", "paper")})
    assert parse_cli_value(flag, "true") is True
    with pytest.raises(ParameterError):
        parse_cli_value(flag, "maybe")


def test_every_book_chapter_spec_loads(root):
    chapters = load_all(root / "notebooks")
    assert "primer" in chapters
    for ch in chapters.values():
        for nb in ch.notebooks.values():
            for profile in ("smoke", "book", "paper"):
                nb.resolve({"profile": profile})


# ---------------------------------------------------------------------------- issue 34, item 5: literal forms
def _param(ptype, value, **bounds):
    return Parameter("x", ptype, "h", {p: value for p in ("smoke", "book", "paper")}, **bounds)


@pytest.mark.parametrize(
    "ptype, default, text, expected",
    [
        ("int", 1, "500", 500),
        ("int", 1, "-3", -3),
        ("int", 1, "0", 0),
        ("float", 0.5, "3", 3.0),
        ("float", 0.5, ".5", 0.5),
        ("float", 0.5, "-0.25", -0.25),
        ("float", 0.5, "1e-3", 0.001),
        ("float", 0.5, "5E-1", 0.5),
        ("bool", False, "true", True),
        ("bool", True, "False", False),
        ("str", "a", "123", "123"),
        ("list[float]", [0.1], "[0.1, 0.2]", [0.1, 0.2]),
        ("list[float]", [0.1], "0.1,0.2", [0.1, 0.2]),
        ("list[int]", [1], "[1,-2]", [1, -2]),
        ("list[str]", ["a"], "[a, b]", ["a", "b"]),
    ],
)
def test_cli_values_in_their_literal_form_are_read(ptype, default, text, expected):
    value = parse_cli_value(_param(ptype, default), text)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(
    "ptype, default, text, fragment",
    [
        ("int", 1, "0x10", "decimal digits"),  # YAML read it as 16
        ("int", 1, "1_000", "decimal digits"),  # YAML read it as 1000
        ("int", 1, "010", "decimal digits"),  # YAML 1.1 read it as 8 (octal)
        ("int", 1, "1.0", "decimal digits"),  # an integral float was taken as an integer
        ("int", 1, "1e3", "decimal digits"),
        ("int", 1, "10 ", "spaces around the value"),
        ("int", 1, " 10", "spaces around the value"),
        ("int", 1, "", "an empty value"),
        ("int", 1, "1\n2", "control character"),
        ("float", 0.5, "0x1p3", "decimal number"),
        ("float", 0.5, "1_0.5", "decimal number"),
        ("float", 0.5, ".inf", "decimal number"),
        ("float", 0.5, "nan", "decimal number"),
        ("float", 0.5, "0.5 ", "spaces around the value"),
        ("bool", False, "yes", "true or false"),  # YAML 1.1 read it as True
        ("bool", False, "on", "true or false"),
        ("bool", False, "1", "true or false"),
        ("str", "a", "a\nb", "control character"),
        ("str", "a", "a ", "spaces around the value"),
        ("list[float]", [0.1], "[0.1, 0x10]", "decimal number"),
        ("list[float]", [0.1], "[[0.1]]", "not written as a list"),
        ("list[float]", [0.1], "[0.1] ", "spaces around the value"),
        ("list[int]", [1], "[1,2.0]", "decimal digits"),
    ],
)
def test_cli_values_not_in_their_literal_form_are_refused_in_one_line(ptype, default, text, fragment):
    with pytest.raises(ParameterError) as err:
        parse_cli_value(_param(ptype, default), text)
    message = str(err.value)
    assert fragment in message and "\n" not in message and "allowed is" in message
    assert "parameter x" in message  # the parameter is named (with the index of a list element)


def test_a_range_too_large_is_counted_not_expanded_and_its_ends_are_checked():
    from causalbandits_lib.book.sweep import count_grid, expand_grid

    spec = load_all(_book_root() / "notebooks")["primer"].notebooks["01_bandits_and_regret"]
    huge = ["seed=0:99999999999999999999"]
    assert count_grid(spec, huge)[0] == 99999999999999999999  # len(range(...)) raised OverflowError
    with pytest.raises(ParameterError, match="99999999999999999999 points"):
        expand_grid(spec, huge)
    with pytest.raises(ParameterError, match="leaves what is allowed") as err:
        expand_grid(spec, huge, max_points=10**30)  # the ends are checked before anything is expanded
    assert "0 <= seed <= 9223372036854775807" in str(err.value)
    assert count_grid(spec, ["seed=0:10:3"])[0] == 4 and len(expand_grid(spec, ["seed=0:10:3"])) == 4
    for bad in ("seed=0x0:4", "seed=0:4 ", "seed=0:1_0", "seed=0:\n4"):
        with pytest.raises(ParameterError) as err:
            expand_grid(spec, [bad])
        assert "\n" not in str(err.value)


def _book_root():
    from causalbandits_lib.book import paths

    return paths.book_root()
