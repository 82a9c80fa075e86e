"""Every kind of bad input gets one clear line naming the file, key and cell; exit 1; nothing on stdout."""

import json

import numpy as np
import pytest

from attntrace.core.engine import trace
from attntrace.errors import AttntraceError
from attntrace.files.problemfile import load
from tests.conftest import SAMPLES

GOOD = json.loads((SAMPLES / "worked_example.json").read_text())


def _with(**changes):
    data = {k: v for k, v in GOOD.items() if k not in changes}
    data.update({k: v for k, v in changes.items() if v is not None})
    return json.dumps(data)


BAD_JSON = {
    "ragged rows": (_with(x=[[1, 0, 1, 0], [0, 2, 0]]), ["x row 2 has 3 values, row 1 has 4"]),
    "string": (_with(x=[[1, "a", 1, 0]]), ['x[0][1]', 'expected a number, got "a"', "row 1, column 2"]),
    "boolean": (_with(w_q=[[True, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]]), ["w_q[0][0]", "got true"]),
    "null": (_with(w_k=[[0, 0, 1], [1, None, 0], [0, 1, 0], [1, 1, 0]]), ["w_k[1][1]", "got null"]),
    "NaN": ('{"x": [[NaN]]}', ["x row 1, column 1 is NaN; every value must be finite"]),
    "Infinity": ('{"x": [[1, 2], [3, -Infinity]]}', ["x row 2, column 2 is -Infinity; every value must be finite"]),
    "NaN in a bias": (_with(b_q=[1, "INF", 3]).replace('"INF"', "Infinity"), ["b_q value 2 is Infinity"]),
    "NaN in a weight": (_with(w_k=[[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, "NAN"]]).replace('"NAN"', "NaN"),
                        ["w_k row 4, column 3 is NaN"]),
    "NaN heads": ('{"x": [[1]], "heads": NaN}', ["heads = NaN must be a whole number"]),
    "Infinity scale": ('{"x": [[1]], "scale": Infinity}', ["scale = Infinity must be true"]),
    "NaN padding": ('{"x": [[1]], "padding": [NaN]}', ["padding[0]", "got NaN"]),
    "NaN name": ('{"x": [[1]], "name": NaN}', ["name must be a string, got NaN"]),
    "NaN label": ('{"x": [[1]], "tokens": [NaN]}', ["tokens[0] (label 1): expected a string, got NaN"]),
    "NaN document": ("NaN", ["the top level must be an object", "got NaN"]),
    "5000 digits": ('{"x": [[%s]]}' % ("1" * 5000), ["x row 1, column 1 is inf; every value must be finite"]),
    "lone surrogate label": (_with(tokens=["a", "\ud800", "c"]), ["tokens[1] (label 2) holds a lone surrogate (\\ud800)"]),
    "lone surrogate name": (_with(name="ok \udfff"), ["name holds a lone surrogate (\\udfff) at character 4"]),
    "lone surrogate key": ('{"x": [[1]], "\\ud800": 1}', ['the key "\\ud800" holds a lone surrogate']),
    "control characters in a key": ('{"x": [[1]], "a\\u001b[2J": 1}', ['unknown key "a\\x1b[2J"']),
    "1e999": ('{"x": [[1, 1e999]]}', ["x row 1, column 2 is inf", "finite"]),
    "empty matrix": (_with(x=[]), ["x is empty"]),
    "empty row": (_with(x=[[]]), ["x row 1 is empty"]),
    "1-D": (_with(x=[1, 0, 1, 0]), ["x is 1-D", "[[...]]"]),
    "3-D": (_with(x=[[[1]]]), ["x[0][0]", "2-D"]),
    "scalar": (_with(x=3), ["x must be a matrix", "got 3"]),
    "w_q rows": (_with(w_q=[[1, 0, 1]] * 3), ["w_q has 3 rows but x has 4 columns (Q = X · W_Q needs them equal)"]),
    "w_k cols": (_with(w_k=[[1, 0]] * 4), ["w_k has 2 columns but w_q has 3 (q · k needs the same d_k)"]),
    "w_v rows": (_with(w_v=[[1, 0]] * 5), ["w_v has 5 rows but x has 4 columns"]),
    "source cols": (_with(source=[[1, 2]]), ["w_k has 4 rows but source has 2 columns"]),
    "b_q size": (_with(b_q=[1, 2]), ["b_q has 2 values but d_k = 3"]),
    "b_v size": (_with(b_v=[1]), ["b_v has 1 value but d_v = 3"]),
    "w_o rows": (_with(w_o=[[1]] * 2), ["w_o has 2 rows but the concatenated heads have 3 columns"]),
    "b_o size": (_with(w_o=[[1]] * 3, b_o=[1, 2]), ["b_o has 2 values but w_o has 1 column"]),
    "b_o alone": (_with(b_o=[1, 2, 3]), ["b_o is set but w_o is not"]),
    "heads divide": (_with(heads=2), ["heads = 2 does not divide d_k = 3"]),
    "heads zero": (_with(heads=0), ["heads = 0 must be a whole number of at least 1"]),
    "heads string": (_with(heads="2"), ['heads = "2"']),
    "heads fraction": (_with(heads=1.5), ["heads = 1.5"]),
    "negative window": (_with(window=-1), ["window = -1 must be a whole number of at least 0"]),
    "zero scale": (_with(scale=0), ["scale = 0 must be true"]),
    "negative scale": (_with(scale=-2), ["scale = -2"]),
    "string scale": (_with(scale="yes"), ['scale = "yes"']),
    "unknown mask": (_with(mask=["casual"]), ['unknown mask "casual"; did you mean "causal"?']),
    "padding length": (_with(padding=[True, False]), ["padding has 2 values but there are 3 keys"]),
    "padding type": (_with(padding=[1, 0, 0]), ["padding[0]", "true or false"]),
    "causal with source": (_with(source=[[1, 2, 3, 4]], mask="causal"), ['"causal" is for self-attention only']),
    "duplicate keys": ('{"x": [[1]], "x": [[2]]}', ['key "x" appears twice']),
    "unknown key": (_with(w_Q=[[1]]), ['unknown key "w_Q"; did you mean "w_q"?']),
    "missing x": (json.dumps({"w_q": [[1]]}), ["x is missing"]),
    "top level list": ("[[1, 2]]", ["top level must be an object", "got a list"]),
    "empty": ("", ["is empty"]),
    "whitespace": ("  \n\t \n", ["is empty"]),
    "malformed": ('{"x": [[1, 2],\n  [3, 4]\n', ["invalid JSON at line 3 column 1"]),
    "trailing comma": ('{"x": [[1, 2]],\n}', ["line 1 column 15", 'a comma before "}"', "JSON allows no trailing comma"]),
    "trailing comma in a row": ('{"x": [[1, 2,]]}', ["line 1 column 13", 'a comma before "]"', "no trailing comma"]),
    "line comment": ('{"x": [[1, 2]] // inputs\n}', ["line 1 column 16", "a comment; JSON allows no comments"]),
    "block comment": ('{\n  /* inputs */ "x": [[1, 2]]}', ["line 2 column 3", "JSON allows no comments"]),
    "hash comment": ('# inputs\n{"x": [[1, 2]]}', ["line 1 column 1", "JSON allows no comments"]),
    "single quotes": ("{'x': [[1, 2]]}", ["line 1 column 2", "double quotes"]),
    "Python True": ('{"x": [[1, 2]], "scale": True}', ["True is Python; JSON writes true"]),
    "Python None": ('{"x": [[1, 2]], "name": None}', ["None is Python; JSON writes null"]),
    "bare key": ('{x: [[1, 2]]}', ['expected a key in double quotes, such as "x"']),
    "leading point": ('{"x": [[.5, 2]]}', ["line 1 column 9", "such as 0.5"]),
    "hex number": ('{"x": [[0x10, 2]]}', ['"0x10" is not a JSON number']),
    "leading zero": ('{"x": [[1, 02]]}', ['"02" is not a JSON number']),
    "missing comma": ('{"x": [[1, 2]]\n "scale": false}', ["line 2 column 2", "expected a comma"]),
    "second object": ('{"x": [[1, 2]]}\n{"x": [[1, 2]]}', ["line 2 column 1", "more text after the JSON has ended"]),
    "unclosed string": ('{"x": [[1, 2]], "name": "my', ['a string is not closed']),
    "windows path": ('{"x": [[1, 2]], "name": "C:\\Users"}', ["write \\\\ for one backslash"]),
    "deep nesting": ("[" * 100_000 + "]" * 100_000, ["nested too deeply"]),
    "tokens length": (_with(tokens=["a"]), ["tokens has 1 label but x has 3 rows"]),
    "unknown layout": (_with(layout="tf"), ['layout = "tf"']),
}


@pytest.mark.parametrize("case", BAD_JSON)
def test_bad_json_gets_one_clear_line(case, attntrace, tmp_path):
    text, expected = BAD_JSON[case]
    path = tmp_path / "sample.json"
    path.write_text(text)
    r = attntrace("run", path)
    assert r.code == 1 and r.out == ""
    line = r.err.strip()
    assert "\n" not in line and "Traceback" not in r.err
    assert line.startswith(f"attntrace: {path}")
    for part in expected:
        assert part in line
    assert not any(word in line for word in ("Expecting", "delimiter", "Extra data", "Unterminated", "Invalid"))


def test_a_path_that_does_not_exist(attntrace, tmp_path):
    r = attntrace("run", tmp_path / "nope.json")
    assert r.code == 1 and "nope.json: no such file or directory" in r.err and r.out == ""


def test_utf16_gets_a_message_saying_so(attntrace, tmp_path):
    path = tmp_path / "ps.json"
    path.write_bytes(json.dumps(GOOD).encode("utf-16"))
    r = attntrace("run", path)
    assert r.code == 1 and "UTF-16" in r.err and "UTF-8" in r.err


@pytest.mark.parametrize("encoding, named", [("utf-16-le", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-32", "UTF-32"),
                                             ("utf-32-le", "UTF-32"), ("utf-32-be", "UTF-32")])
def test_wide_text_without_or_with_a_bom_is_named(attntrace, tmp_path, encoding, named):
    path = tmp_path / "ps.json"
    path.write_bytes(json.dumps(GOOD).encode(encoding))
    r = attntrace("run", path)
    line = r.err.strip()
    assert r.code == 1 and r.out == "" and "\n" not in line and f"ps.json is {named} text" in line and "UTF-8" in line
    assert "\x00" not in r.err and ("UTF-16" not in line if named == "UTF-32" else True)


def test_a_utf16_csv_without_a_bom_is_named_not_echoed(attntrace, tmp_path):
    d = _csv_dir(tmp_path)
    (d / "x.csv").write_bytes("1,2\n3,4\n".encode("utf-16-be"))
    r = attntrace("run", d)
    assert r.code == 1 and "x.csv is UTF-16 text" in r.err and "\x00" not in r.err


def test_utf8_with_a_bom_is_read(attntrace, tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode())
    assert attntrace("run", path, "-f", "json").code == 0


def test_files_over_the_size_cap_say_which_cap_and_how_to_raise_it(attntrace, tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(GOOD) + " " * 2000)
    r = attntrace("run", path, env={"ATTNTRACE_MAX_MB": "0.001"})
    assert r.code == 1 and "over the 0.001 MB cap" in r.err and "ATTNTRACE_MAX_MB=" in r.err
    assert attntrace("run", path, env={"ATTNTRACE_MAX_MB": "1"}).code == 0


def test_stdin_dash_reads_json(attntrace):
    r = attntrace("run", "-", "-f", "json", input=json.dumps(GOOD))
    assert r.code == 0 and json.loads(r.out)["output"] == trace(load(None)).output.tolist()


def test_stdin_errors_name_stdin(attntrace):
    r = attntrace("run", "-", input='{"x": [[1, "b"]]}')
    assert r.code == 1 and r.err.startswith("attntrace: stdin: x[0][1]")


# CSV


def _csv_dir(tmp_path, **files):
    d = tmp_path / "problem"
    d.mkdir()
    for name, text in files.items():
        (d / name.replace("_csv", ".csv").replace("_txt", ".txt")).write_text(text)
    return d


def test_a_csv_directory_and_a_json_file_give_identical_traces():
    a, b = trace(load(str(SAMPLES / "worked_example_csv"))), trace(load(str(SAMPLES / "worked_example.json")))
    for ha, hb in zip(a.heads, b.heads):
        for key in ("q", "k", "v", "scores", "weights", "output"):
            np.testing.assert_array_equal(getattr(ha, key), getattr(hb, key))
    assert a.problem.scale == b.problem.scale and a.problem.name == b.problem.name


def test_a_csv_header_is_read_as_a_header_and_said_on_stderr(attntrace):
    r = attntrace("run", SAMPLES / "worked_example_csv")
    assert r.code == 0 and "w_q.csv: row 1 (q1, q2, q3) read as a header" in r.err
    assert "read as a header" not in r.out


def test_csv_comments_tokens_and_single_rows_stay_2d(tmp_path):
    d = _csv_dir(tmp_path, x_csv="# one input\n1, 2, 3  # trailing comment\n", tokens_txt="solo\n")
    p = load(str(d))
    assert p.x.shape == (1, 3) and p.tokens == ("solo",)


def test_csv_single_column_stays_2d(tmp_path):
    d = _csv_dir(tmp_path, x_csv="1\n2\n3\n")
    assert load(str(d)).x.shape == (3, 1)


def test_csv_decimal_commas_suggest_the_fix(attntrace, tmp_path):
    d = _csv_dir(tmp_path, x_csv="1,5;2,0\n3,1;4,0\n")
    r = attntrace("run", d)
    assert r.code == 1 and "x.csv line 1" in r.err and "decimal commas" in r.err and "'.'" in r.err


def test_csv_bad_cell_names_line_and_column(attntrace, tmp_path):
    d = _csv_dir(tmp_path, x_csv="1,2\n3,oops\n")
    r = attntrace("run", d)
    assert r.code == 1 and 'x.csv line 2, column 2: expected a number, got "oops"' in r.err


def test_csv_control_characters_in_a_cell_are_shown_as_escapes(attntrace, tmp_path):
    d = _csv_dir(tmp_path, x_csv="1,2\n3,\x004\x1b[2J\n")
    r = attntrace("run", d)
    assert r.code == 1 and 'x.csv line 2, column 2: expected a number, got "\\x004\\x1b[2J"' in r.err
    assert "\x00" not in r.err and "\x1b" not in r.err


@pytest.mark.parametrize("cell", ["nan", "inf", "-inf", "NaN", "Infinity", "1e999"])
def test_csv_nan_or_inf_in_row_1_is_the_same_error_as_in_row_2(attntrace, tmp_path, cell):
    first = _csv_dir(tmp_path, x_csv=f"{cell},2\n3,4\n")
    r1 = attntrace("run", first)
    assert r1.code == 1 and r1.out == "" and "header" not in r1.err
    assert f"x.csv line 1, column 1 is {cell}; every value must be finite" in r1.err
    (first / "x.csv").write_text(f"1,2\n{cell},4\n")
    r2 = attntrace("run", first)
    assert r2.code == 1 and r2.err == r1.err.replace("line 1", "line 2")


def test_a_csv_header_is_still_a_header(attntrace, tmp_path):
    d = _csv_dir(tmp_path, x_csv="a,nan\n1,2\n")
    r = attntrace("run", d)
    assert r.code == 0 and "row 1 (a, nan) read as a header" in r.err


def test_a_directory_with_both_x_csv_and_x_npy(attntrace, tmp_path):
    d = _csv_dir(tmp_path, x_csv="1,2\n3,4\n")
    np.save(d / "x.npy", np.eye(2))
    r = attntrace("run", d)
    assert r.code == 1 and "both x.csv and x.npy give x; keep one" in r.err and "attntrace.json" not in r.err
    (d / "x.npy").unlink()
    (d / "attntrace.json").write_text('{"x": [[1, 0]]}')
    r = attntrace("run", d)
    assert r.code == 1 and "x.csv: x is also given in" in r.err and "attntrace.json" in r.err


def test_a_literal_in_a_directory_settings_file_names_its_cell(attntrace, tmp_path):
    d = _csv_dir(tmp_path, x_csv="1,2\n3,4\n", attntrace_json='{"w_q": [[1, 0], [NaN, 1]]}')
    (d / "attntrace_json").rename(d / "attntrace.json")
    r = attntrace("run", d)
    assert r.code == 1 and "w_q row 2, column 1 is NaN" in r.err


def test_csv_ragged_rows(attntrace, tmp_path):
    d = _csv_dir(tmp_path, x_csv="1,2\n3\n")
    r = attntrace("run", d)
    assert r.code == 1 and "x.csv line 2: x has 1 value, the first row has 2" in r.err


def test_csv_directory_without_x(attntrace, tmp_path):
    d = _csv_dir(tmp_path, w_q_csv="1\n")
    r = attntrace("run", d)
    assert r.code == 1 and "no x.csv or x.npy" in r.err


def test_matrix_options_replace_the_files_matrices(attntrace, tmp_path):
    (tmp_path / "wq.csv").write_text("1,0,0\n0,1,0\n0,0,1\n0,0,0\n")
    r = attntrace("run", "-f", "json", "--w-q", tmp_path / "wq.csv")
    assert r.code == 0 and json.loads(r.out)["heads"][0]["q"][0] == [1.0, 0.0, 1.0]


def test_matrix_option_shape_errors_are_clear(attntrace, tmp_path):
    (tmp_path / "wq.csv").write_text("1,0\n0,1\n")
    r = attntrace("run", "--w-q", tmp_path / "wq.csv")
    assert r.code == 1 and "w_q has 2 rows but x has 4 columns" in r.err


# NumPy


def test_npy_and_npz_files(tmp_path):
    np.save(tmp_path / "x.npy", np.eye(4)[:2])
    p = load(None, {"x": str(tmp_path / "x.npy")})
    assert p.x.shape == (2, 4)
    np.savez(tmp_path / "p.npz", x=np.eye(2), w_q=np.ones((2, 2)))
    assert load(str(tmp_path / "p.npz")).w_q.shape == (2, 2)


def test_npy_with_pickles_is_refused(attntrace, tmp_path):
    np.save(tmp_path / "x.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    r = attntrace("run", "--x", tmp_path / "x.npy")
    assert r.code == 1 and "pickles" in r.err


def test_an_npz_that_is_not_a_zip_is_not_blamed_on_pickles(attntrace, tmp_path):
    path = tmp_path / "p.npz"
    path.write_text("hello")
    r = attntrace("run", path)
    assert r.code == 1 and "p.npz is not an .npz file: it is not a zip archive" in r.err and "pickle" not in r.err


def test_an_npy_and_an_npz_swapped(attntrace, tmp_path):
    np.save(tmp_path / "x.npy", np.eye(2))
    (tmp_path / "x.npy").rename(tmp_path / "p.npz")
    r = attntrace("run", tmp_path / "p.npz")
    assert r.code == 1 and "is an .npy file (one array), not an .npz archive" in r.err
    np.savez(tmp_path / "q.npz", x=np.eye(2))
    (tmp_path / "q.npz").rename(tmp_path / "q.npy")
    r = attntrace("run", "--x", tmp_path / "q.npy")
    assert r.code == 1 and "is an .npz archive (several arrays), not an .npy file" in r.err


def test_settings_saved_as_0d_arrays_in_an_npz_are_their_scalars(attntrace, tmp_path):
    path = tmp_path / "p.npz"
    np.savez(path, x=np.eye(4)[:3], heads=2, scale=False, mask="causal", name="saved", tokens=np.array(["a", "b", "c"]),
             padding=np.array([False, False, True]))
    p = load(str(path))
    assert p.heads == 2 and p.scale is False and p.masks == ("causal", "padding") and p.name == "saved"
    assert p.tokens == ("a", "b", "c") and p.padding == (False, False, True)
    np.savez(path, x=np.eye(2), heads=1.5)
    r = attntrace("run", path)
    assert r.code == 1 and "heads = 1.5 must be a whole number" in r.err and "array(" not in r.err


def test_npy_non_finite_and_1d_are_refused(attntrace, tmp_path):
    np.save(tmp_path / "x.npy", np.array([[1.0, np.nan]]))
    r = attntrace("run", "--x", tmp_path / "x.npy")
    assert r.code == 1 and "row 1, column 2 is nan" in r.err
    np.save(tmp_path / "v.npy", np.array([1.0, 2.0]))
    r = attntrace("run", "--x", tmp_path / "v.npy")
    assert r.code == 1 and "1-D" in r.err


def test_torch_layout_transposes_the_weights():
    data = {**GOOD, "layout": "torch"}
    for key in ("w_q", "w_k", "w_v"):
        data[key] = np.array(GOOD[key]).T.tolist()
    from attntrace.files.problemfile import from_dict

    np.testing.assert_array_equal(trace(from_dict(data, "t")).output, trace(load(None)).output)


def test_a_boolean_npy_is_refused_as_json_booleans_are(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, np.eye(2, dtype=bool))
    with pytest.raises(AttntraceError, match=r"x has dtype bool \(true/false\); expected numbers"):
        load(str(path))
