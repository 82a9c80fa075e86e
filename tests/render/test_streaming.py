"""Streamed output is the document's own bytes: JSON and CSV written a block of rows at a time, numbers as before."""

import csv
import io
import json
import re
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attntrace.api import Trace
from attntrace.core.engine import trace
from attntrace.core.masks import Padding
from attntrace.core.problem import Problem, example
from attntrace.errors import AttntraceError
from attntrace.escape import comment, spreadsheet
from attntrace.files import written as cli_files
from attntrace.files.problemfile import load
from attntrace.render import csvfmt
from attntrace.render import jsonform as contract
from attntrace.render.document import FORMATS, Document, Style, render, stream, trace_document
from attntrace.render.layout import cells
from attntrace.views.page import Note
from tests.conftest import SAMPLES

# what dumps wrote before it was streamed: one document built in memory
_UNSEEN = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\x7f-\x9f]")


def _dump(value, indent=""):
    inner = indent + "  "
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {_dump(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list) and value and all(isinstance(v, (list, dict)) for v in value):
        return "[\n" + ",\n".join(inner + _dump(v, inner) for v in value) + "\n" + indent + "]"
    return _UNSEEN.sub(lambda m: f"\\u{ord(m[0]):04x}", json.dumps(value, ensure_ascii=False, allow_nan=False))


def _old_dumps(data):
    return _dump(data) + "\n"


# what the CSV format wrote before it was streamed: the csv module for every row, format() for every cell
def _old_cells(values, rows, cols, precision):
    fmt = f"{{:.{precision}f}}".format
    out = [[fmt(v) for v in row] for row in values[np.ix_(rows, cols)].tolist()]
    return [[c[1:] if c == fmt(-0.0) else c for c in row] for row in out]


def _old_csv_step(step, precision):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for item in step.items:
        if isinstance(item, Note):
            out.write(comment(item.text) + "\n")
        else:
            out.write(comment(step.prefix + item.title) + "\n")
            writer.writerow(["", *map(spreadsheet, item.cols)])
            shown = _old_cells(item.values, list(range(len(item.rows))), list(range(len(item.cols))), precision)
            for label, row in zip(item.rows, shown):
                writer.writerow([spreadsheet(label), *row])
        out.write("\n")
    return out.getvalue()


def _tiny_values():
    """a problem whose intermediates reach every magnitude: 1e-05 and 1e-07 (written unlike orjson), 1e+16, -0.0"""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(12, 6)) * np.logspace(-9, 17, 6)
    x[0, 0] = -0.0
    return Problem(x=x, w_q=rng.normal(size=(6, 4)) * 1e-6, w_k=rng.normal(size=(6, 4)), w_v=rng.normal(size=(6, 4)),
                   tokens=tuple(f'"t{i}",\u202e' for i in range(12)), mask=("causal",), heads=2)


TRACES = {
    "worked example": lambda: trace(example()),
    "causal, one query": lambda: trace(load(str(SAMPLES / "causal.json")), query=2),
    "two heads": lambda: trace(load(str(SAMPLES / "two_heads.json"))),
    "cross": lambda: trace(load(str(SAMPLES / "cross.json"))),
    "carried rounding": lambda: trace(load(str(SAMPLES / "scaled.json")), carry_rounding=2),
    "every magnitude, masked": lambda: trace(_tiny_values()),
    "every key masked": lambda: trace(replace(example(), mask=(Padding((True, True, True)),))),
}


@pytest.fixture(params=[contract.BLOCK, 7, 1], ids=["one block", "blocks of 7 cells", "a row at a time"])
def block(request, monkeypatch):
    monkeypatch.setattr(contract, "BLOCK", request.param)
    monkeypatch.setattr(csvfmt, "ROWS_AT_ONCE", request.param)


@pytest.mark.parametrize("name", TRACES)
def test_the_json_stream_is_the_documents_bytes(name, block):
    t = TRACES[name]()
    pieces = list(contract.chunks(contract.trace_form(t)))
    assert "".join(pieces) == _old_dumps(contract.trace_to_dict(t)) == contract.dumps(contract.trace_to_dict(t))


@pytest.mark.parametrize("name", TRACES)
def test_the_json_stream_without_orjson_is_the_same(name, monkeypatch):
    t = TRACES[name]()
    monkeypatch.setattr(contract, "_orjson_agrees", lambda: False)
    assert contract.dumps(contract.trace_form(t)) == _old_dumps(contract.trace_to_dict(t))


@pytest.mark.parametrize("name", TRACES)
def test_the_csv_stream_is_the_documents_bytes(name, block):
    for step in trace_document(TRACES[name]()).steps:
        for precision in (0, 2, 4):
            assert "".join(csvfmt.stream_step(step, precision)) == _old_csv_step(step, precision)


@pytest.mark.parametrize("fmt", FORMATS)
def test_stream_is_render_for_every_format(fmt, block):
    t = TRACES["every magnitude, masked"]()
    base = trace_document(t)
    documents = [replace(base, data=contract.trace_form(t)), replace(base, title="a: title", preface=lambda f: f"[{f}]\n")]
    for document in documents:
        for style in (Style(), Style(precision=1, blank_from=4)):
            assert "".join(stream(document, fmt, style)) == "".join(render(document, fmt, style))


def test_the_json_form_with_arrays_is_the_json_form():
    t = TRACES["every magnitude, masked"]()
    assert contract.to_lists(contract.trace_form(t)) == contract.trace_to_dict(t)
    assert contract.problem_to_dict(t.problem) == contract.to_lists(contract.problem_form(t.problem))


def test_a_document_without_a_json_form_cannot_stream_json():
    with pytest.raises(ValueError):
        stream(Document(), "json", Style())


def test_run_json_and_csv_print_what_the_library_renders(attntrace, tmp_path):
    t = TRACES["two heads"]()
    for fmt in ("json", "csv"):
        printed = attntrace("run", SAMPLES / "two_heads.json", "--format", fmt).out
        assert printed == Trace.of(t).render(fmt)
        assert attntrace("run", SAMPLES / "two_heads.json", "--format", fmt, "-o", tmp_path / "out").code == 0
        assert (tmp_path / "out").read_text(encoding="utf-8") == printed


def test_a_streamed_file_is_the_texts_bytes_and_a_failure_leaves_the_old_file(tmp_path):
    path = tmp_path / "out.json"
    cli_files.write_files({path: iter(["{", "\n", "é}"])})
    assert path.read_bytes() == "{\né}".encode()

    def failing():
        yield "half"
        raise AttntraceError("stopped")

    with pytest.raises(AttntraceError):
        cli_files.write_files({tmp_path / "other.txt": "whole", path: failing()})
    assert path.read_bytes() == "{\né}".encode() and sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]
    with pytest.raises(AttntraceError, match="lone surrogate"):
        cli_files.write_files({path: iter(["ok", "\ud800"])})
    assert path.read_bytes() == "{\né}".encode() and sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


finite_or_not = st.floats(width=64) | st.sampled_from([1e-05, -1.5e-05, 9.999999999999999e-05, 1e-07, 1e-09, 1e16, -0.0])


def test_the_installed_orjson_writes_numbers_as_repr_does():
    """the JSON output takes orjson's quick path only when orjson writes floats as repr() does (3.12 on): a release
    that does not fails here rather than quietly taking the slow path"""
    assert contract._orjson_agrees()


@settings(max_examples=400, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, max_side=6), elements=finite_or_not))
def test_numbers_are_written_as_json_dumps_writes_them(a):
    written = "".join(contract.chunks({"a": a}))
    assert written == _old_dumps({"a": contract.floats(a)})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(width=64) | st.floats(-1e-3, 1e-3), min_size=1, max_size=12), st.integers(0, 17))
def test_cells_format_every_number_as_format_does(row, precision):
    values = np.array([row, row[::-1]])
    rows, cols = [0, 1], list(range(len(row)))
    assert cells(values, rows, cols, precision) == _old_cells(values, rows, cols, precision)


def test_a_slice_of_an_array_is_written_as_its_list_is():
    """a column slice (not C-contiguous), of floats or of whole numbers, writes as json.dumps writes its list"""
    from attntrace.render.jsonform import dumps

    for a in ((np.arange(12.0).reshape(3, 4) / 7)[:, 1:3], np.arange(12).reshape(3, 4)[:, ::2]):
        assert not a.flags.c_contiguous
        assert dumps({"a": a}) == dumps({"a": a.tolist()}) and json.loads(dumps({"a": a})) == {"a": a.tolist()}


@pytest.mark.parametrize("decimals", [None, 3])
def test_weighted_values_worked_out_a_block_at_a_time_are_step_6s_to_the_bit(decimals):
    rng = np.random.default_rng(5)
    t = trace(Problem(x=rng.normal(size=(520, 128)).round(3), heads=2), carry_rounding=decimals)
    data = contract.trace_form(t)
    for a, head in enumerate(data["heads"]):
        for item in head["weighted"]:
            derived = item["values"]
            assert isinstance(derived, contract.Derived) and derived.shape == (520, 64)
            blocks = [r for r in contract._rows(derived, ",\n") if not isinstance(r, str)]
            assert len(blocks) > 1  # 520 keys of 64 values: more than one block
            whole = np.concatenate([b.matrix.rows(b.start, b.stop) for b in blocks])
            assert whole.tobytes() == t.weighted(a, item["input"] - 1).tobytes()
            assert "".join(b.text() + ",\n" for b in blocks)[:-2] == contract._lines(whole, ",\n").decode()
    assert [item["input"] for item in data["heads"][1]["weighted"]] == [1, 2, 3, 520]
    assert contract.to_lists(data["heads"][1]["weighted"])[3]["values"] == contract.floats(t.weighted(1, 519))


def test_step_6_is_worked_out_once_and_cannot_be_overwritten():
    t = trace(example())
    first = t.weighted(0, 1)
    assert t.weighted(0, 1) is first and not first.flags.writeable
    assert t.weighted_rows(0, 1, 1, 3).tobytes() == first[1:3].tobytes()
