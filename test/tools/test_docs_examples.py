"""The docs print what the tools print: README.md, docs/walkthrough.md and docs/examples/*.mlir.

In the two documents, a fenced block of `mlc-import` / `mlc-opt` / `mlc-translate` command lines
(`a | b` pipes allowed) is run from the repository root, in this process; every command must
succeed, and each fenced block right after it is its printed output: a piece of its stdout or of
its stderr, where a line `...` stands for lines left out. Each docs/examples/*.mlir is what the
`mlc-import` command its .py names prints.
"""

from __future__ import annotations

import io
import re
import shlex
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ["README.md", "docs/walkthrough.md"]
EXAMPLES = ROOT / "docs" / "examples"
TOOLS = ("mlc-import", "mlc-opt", "mlc-translate")
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```$", re.M | re.S)
IMPORT = re.compile(r"`(mlc-import (docs/examples/\w+\.py:\w+(?: --shape \S+)+))`")


def tool(name: str):
    if name == "mlc-import":
        from mlc.tools.mlc_import import main
        return main
    if name == "mlc-opt":
        from mlc.tools.mlc_opt import run
        return run
    from mlc.tools.mlc_translate import run
    return run


def run_line(line: str) -> tuple[int, str, str]:
    """`line`'s commands, each one's stdout the next one's stdin: the exit status of the first
    that fails (else 0), the last stdout and every command's stderr."""
    stdin, errors = "", []
    for command in line.split(" | "):
        argv = shlex.split(command)
        out, err, saved = io.StringIO(), io.StringIO(), sys.stdin
        sys.stdin = io.StringIO(stdin)
        try:
            with redirect_stdout(out), redirect_stderr(err):
                code = tool(argv[0])(argv[1:])
        finally:
            sys.stdin = saved
        errors.append(err.getvalue())
        if code:
            return code, out.getvalue(), "".join(errors)
        stdin = out.getvalue()
    return 0, stdin, "".join(errors)


def examples(doc: str) -> list[tuple[str, list[str]]]:
    """Each command line of `doc` with the fenced blocks printed after it."""
    text = (ROOT / doc).read_text()
    found, last_end = [], None
    for block in FENCE.finditer(text):
        body = block.group(1)
        lines = [line.split("  #")[0].strip() for line in body.splitlines()]
        commands = [line for line in lines if line.split(" ")[0] in TOOLS]
        if commands:
            found += [(line, []) for line in commands]
        elif found and text[last_end:block.start()].strip() == "":
            found[-1][1].append(body)
        last_end = block.end()
    return found


def excerpt_of(block: str, printed: str) -> bool:
    """Whether `block` is a piece of `printed`: its lines in order, runs between `...` lines
    contiguous."""
    runs, run = [], []
    for line in block.splitlines():
        if line.strip() == "...":
            runs.append(run)
            run = []
        else:
            run.append(line)
    runs = [r for r in runs + [run] if r]
    lines, at = printed.splitlines(), 0
    for r in runs:
        starts = [i for i in range(at, len(lines) - len(r) + 1) if lines[i:i + len(r)] == r]
        if not starts:
            return False
        at = starts[0] + len(r)
    return bool(runs)


CASES = [(doc, line, blocks) for doc in DOCS for line, blocks in examples(doc)]


def test_the_docs_show_commands():
    assert {doc for doc, _, _ in CASES} == set(DOCS)
    assert sum(len(blocks) for _, _, blocks in CASES) >= 6


@pytest.mark.parametrize(("doc", "line", "blocks"), CASES, ids=[f"{d}:{l[:60]}" for d, l, _ in CASES])
def test_command_prints_what_the_doc_shows(doc, line, blocks, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, err = run_line(line)
    assert code == 0, f"{doc}: `{line}` failed:\n{err}"
    for block in blocks:
        assert excerpt_of(block, out) or excerpt_of(block, err), (
            f"{doc}: `{line}` no longer prints this block:\n{block}\n--- stdout:\n{out}\n--- stderr:\n{err}")


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.mlir")), ids=lambda p: p.name)
def test_example_ir_is_what_mlc_import_prints(example, monkeypatch):
    source = example.with_suffix(".py")
    commands = IMPORT.findall(source.read_text()) if source.exists() else []
    assert [target.split(":")[0] for _, target in commands] == [f"docs/examples/{source.name}"], (
        f"{source.name} should name the one `mlc-import` command that prints {example.name}")
    monkeypatch.chdir(ROOT)
    code, out, err = run_line(commands[0][0])
    assert code == 0, err
    assert out == example.read_text(), f"{example.name} is not what `{commands[0][0]}` prints"


def test_readme_names_each_pass_by_the_stages_it_accepts():
    from mlc.passes.registry import _BUILTIN, PASSES

    text = (ROOT / "README.md").read_text()
    paragraph = text[text.index("Each pass takes the stages of IR its `ACCEPTS` names"):]
    paragraph = paragraph[:paragraph.index("IR of another stage")]
    listed = {stage: set(re.findall(r"`([\w-]+)`", names))
              for stage, names in re.findall(r"(aten|loops|buffer|triton) for (.*?)(?:;|\.\s)", paragraph, re.S)}
    accepts = {stage: {name for name in _BUILTIN if stage in PASSES[name]().ACCEPTS} for stage in listed}
    assert set(listed) == {"aten", "loops", "buffer", "triton"}
    assert listed == accepts
