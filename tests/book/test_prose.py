"""Numbers in a notebook's prose must say where they come from, and a measurement must be the
record's at the precision it is written with."""

from __future__ import annotations

from causalbandits_lib.book.prose import numbers_in, paragraphs, untraced

RECORD = {
    "parameters": {"T": 5000, "n_runs": 20},
    "metrics": {"email.fallback_rounds.F-UCB": 4999.0, "email.regret": {"UCB": 812.34}},
    "claims": [{"id": "fucb.x.y", "measured": 0.2732, "paper_value": 392.1, "details": {}}],
}
MD = """---
kernelspec: {}
---

# Title with 2,000 in it

F-UCB falls back in 4,999 rounds of 5,000 <!-- from: metric email.fallback_rounds.F-UCB, parameter T -->

UCB's regret is 812.3 <!-- from: metric email.regret -->

UCB's regret is 815 <!-- from: metric email.regret -->

The radius stays above 0.27, in Table 12 and Eq. (71), as in 2022 and $T = 1234$ and `9999`.
<!-- from: claim fucb.x.y -->

A typed number 4,321 with no source.

```{code-cell} ipython3
x = 123456
```

```{note}
An admonition with 77.5 in it.
```
"""


def test_paragraphs_skip_front_matter_headings_and_code_but_keep_admonitions():
    texts = [" ".join(p.text.split()) for p in paragraphs(MD)]
    assert not any("Title" in t or "123456" in t or "kernelspec" in t for t in texts)
    assert any("77.5" in t for t in texts)


def test_references_years_small_integers_math_and_code_are_not_measurements():
    text = "Table 12, Eq. (71), Eqs. (40)-(43), Theorems 3 and 4, §4.2, notebook 3, in 2022, 7 arms, "
    text += "$T = 1234$, `9999`; 0.27"
    assert [w for w, _, _ in numbers_in(text)] == ["0.27"]
    assert [v for _, v, _ in numbers_in("for the first 2,000 rounds, 12% of them")] == [2000.0, 0.12]


def test_each_number_is_traced_at_its_precision_or_reported():
    found = untraced(MD, RECORD, {"fucb/x": RECORD})
    assert len(found) == 3, found
    assert any("815 matches none of the values its sources name" in p for p in found)
    assert any("numbers ['4,321'] and no <!-- from: ... --> comment" in p for p in found)
    assert any("numbers ['77.5']" in p for p in found)
    # 4,999 and 5,000 (metric and parameter), 812.3 (812.34 to one decimal), 0.27 (0.2732 to two) are traced
    assert not any("4,999" in p or "812.3 " in p or "0.27 " in p for p in found)


def test_a_source_that_does_not_resolve_is_reported():
    md = "A value 0.5 here <!-- from: metric nothing.here, claim fucb.none, parameter zeta, table 3 -->\n"
    found = untraced(md, RECORD, {"fucb/x": RECORD})
    assert any("metric 'nothing.here' is not in the record" in p for p in found)
    assert any("claim 'fucb.none' is in no paper-scale record" in p for p in found)
    assert any("parameter 'zeta' is not in the record" in p for p in found)
    assert any("source 'table' is not one of" in p for p in found)
