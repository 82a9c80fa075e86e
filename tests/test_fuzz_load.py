"""Fuzzing the loaders: whatever the bytes, only the project's own error escapes."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from attntrace.errors import AttntraceError
from attntrace.files import csvfile, jsonfile
from attntrace.files.problemfile import from_dict

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(
        ["x", "w_q", "w_k", "w_v", "heads", "scale", "mask", "window", "padding", "tokens", "source", "b_q", "w_o",
         "b_o", "layout", "name", "zz"]), inner, max_size=5),
    max_leaves=20,
)


def _load_text(text: str) -> None:
    try:
        from_dict(jsonfile.parse(text, "fuzz.json"), "fuzz.json")
    except AttntraceError:
        pass


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_value_loads_or_raises_our_error(value):
    try:
        text = json.dumps(value)
    except ValueError:
        return
    _load_text(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='[]{}",:0123456789.-eE xNaIfinty\n', max_size=60))
def test_any_json_text_loads_or_raises_our_error(text):
    _load_text(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789.,;-+eE# \n\tabnif\"", max_size=80))
def test_any_csv_text_loads_or_raises_our_error(text):
    try:
        csvfile.parse(text, "fuzz.csv", "x")
    except AttntraceError:
        pass
