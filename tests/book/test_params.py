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
