"""The SVG and HTML exports and the problem's name as a title: pictures that parse, hold every number, load nothing."""

import json
import re
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import SAMPLES

NUMBER = re.compile(r"-?\d+\.\d{4}")


def _svg_text(path) -> str:
    root = ET.fromstring(path.read_text(encoding="utf-8"))
    return "\n".join(e.text or "" for e in root.iter() if e.tag.endswith("text")).replace("\xa0", " ")


@pytest.mark.parametrize("sample", ["homework/problem.json", "labels.json", "two_heads.json"])
def test_the_svg_parses_and_holds_every_number_the_tables_show(attntrace, tmp_path, sample):
    svg = tmp_path / "trace.svg"
    r = attntrace("run", SAMPLES / sample, "--export-svg", svg, "--format", "plain")
    assert r.code == 0, r.err
    shown = _svg_text(svg)
    for number in set(NUMBER.findall(r.out)):
        assert number in shown, number


@pytest.mark.parametrize("flag", ["--export-svg", "--export-html"])
def test_an_export_loads_nothing_remote(attntrace, tmp_path, flag):
    path = tmp_path / "out"
    assert attntrace("run", SAMPLES / "labels.json", flag, path).code == 0
    text = path.read_text(encoding="utf-8")
    assert "@font-face" not in text and "https://" not in text and not re.search(r"url\((?!#)", text)
    assert re.findall(r"http://[^\s\"']+", text) in ([], ["http://www.w3.org/2000/svg"])


def test_a_light_theme_for_handouts_and_a_dark_one_by_default(attntrace, tmp_path):
    dark, light = tmp_path / "dark.svg", tmp_path / "light.svg"
    assert attntrace("run", "--export-svg", dark).code == 0
    assert attntrace("run", "--export-svg", light, "--theme", "light").code == 0
    background = re.compile(r'<rect fill="(#[0-9a-f]{6})" stroke')
    assert background.search(light.read_text())[1] == "#ffffff"  # type: ignore[index]
    shade = background.search(dark.read_text())[1]  # type: ignore[index]
    assert sum(int(shade[i:i + 2], 16) for i in (1, 3, 5)) < 3 * 80
    page = tmp_path / "light.html"
    assert attntrace("run", "--export-html", page, "--theme", "light").code == 0
    assert "background-color: #ffffff" in page.read_text()
    assert attntrace("run", "--export-svg", dark, "--theme", "sepia").code == 2


def test_the_problems_name_titles_the_output_and_every_export(attntrace, tmp_path):
    name = json.loads((SAMPLES / "homework" / "problem.json").read_text(encoding="utf-8"))["name"]
    svg, page = tmp_path / "t.svg", tmp_path / "t.html"
    r = attntrace("step", SAMPLES / "homework" / "problem.json", "--input", "2", "--export-svg", svg,
                  "--export-html", page)
    assert r.out.startswith(f"{name}\n") and "\n\nStep 3 · reminder" in r.out
    assert f"<title>{name}</title>" in page.read_text(encoding="utf-8")
    root = ET.fromstring(svg.read_text(encoding="utf-8"))
    titles = [e.text for e in root.iter() if e.tag.endswith("text") and "title" in (e.get("class") or "")]
    assert [t.replace("\xa0", " ") for t in titles if t] == [name]
    markdown = attntrace("run", SAMPLES / "homework" / "problem.json", "--format", "markdown").out
    assert markdown.startswith("# " + name.replace("_", "\\_") + "\n\n## Step 1")  # d\_k: no emphasis
    csv = attntrace("run", SAMPLES / "homework" / "problem.json", "--format", "csv").out
    assert csv.startswith(f"# {name}\n")


def test_a_problem_without_a_name_has_no_title_line_and_a_plain_export_title(attntrace, tmp_path):
    path, page = tmp_path / "p.json", tmp_path / "p.html"
    path.write_text(json.dumps({"x": [[1, 0], [0, 1]]}))
    r = attntrace("run", path, "--export-html", page)
    assert r.out.startswith("Step 1 · prepare inputs") and "<title>attntrace</title>" in page.read_text()


def test_a_name_is_text_in_the_html_title(attntrace, tmp_path):
    path, page = tmp_path / "p.json", tmp_path / "p.html"
    path.write_text(json.dumps({"x": [[1, 0], [0, 1]], "name": "</title><script>x{0}</script>\u202e"}))
    assert attntrace("run", path, "--export-html", page).code == 0
    head = page.read_text().split("</title>")[0]
    assert "<script>" not in head and "&lt;/title&gt;&lt;script&gt;x{0}" in head and "\u202e" not in head


def test_json_with_an_svg_export_writes_both(attntrace, tmp_path):
    svg = tmp_path / "t.svg"
    r = attntrace("run", "--format", "json", "--export-svg", svg)
    assert r.code == 0 and json.loads(r.out)["format"]
    ET.fromstring(svg.read_text(encoding="utf-8"))
    assert "Step 8" in _svg_text(svg)


def test_the_ascii_look_of_a_run(attntrace):
    out = attntrace("run", SAMPLES / "labels.json", "--format", "table", "--ascii", "--color", "never").out
    tables = "\n".join(line for line in out.splitlines() if line.startswith(("|", "+")))
    assert tables and tables.replace("我", "").replace("喜欢", "").replace("😀", "").isascii()
    assert "━" not in out and "▁" not in out
