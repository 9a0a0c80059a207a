"""Saved documents, tampered with (issue 30): every field of a real one set to null, the wrong type, Infinity,
10**400 or nested 100,000 deep. Each is read as a user would (``bench --compare``, ``merge``, in-process): the
variant is refused with exit 2 and one ``error:`` line naming the file and the field, or read and used without
a jitscope traceback. Never exit 3.

The variants are made from one real document of each kind, field by field (of a list, its first item only).
The reader is asked about every variant (fast, in-process), the CLI about a sample of them; each variant the
reader accepts is compared or merged, so a value that passes the reader but breaks what uses it fails too.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jitscope.cli.app import main
from jitscope.errors import UsageError
from jitscope.model.common import to_jsonable
from tests.conftest import ROOT, run_cli
from tests.hosts.test_hosts_bad_input import record

DEEP = 100_000
_MARK = "\u0001tampered\u0001"


def fields(doc: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every value in ``doc`` (a list's first item only: the others are the same shape)."""
    yield at
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from fields(value, (*at, key))
    elif isinstance(doc, list) and doc:
        yield from fields(doc[0], (*at, 0))


def wrong_type(value: Any) -> Any:
    if isinstance(value, str):
        return 7
    if isinstance(value, dict):
        return [1]
    if isinstance(value, list):
        return {"x": 1}
    return "x"


def variants(doc: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(what was done, the tampered document's text) for every field but ``kind`` and ``schema_version``."""
    for number, at in enumerate(fields(doc)):
        if not at or at[0] in ("kind", "schema_version"):
            continue
        original = _get(doc, at)
        name = ".".join(map(str, at))
        changes = [("null", None), ("wrong type", wrong_type(original)), ("Infinity", float("inf")),
                   ("10**400", 10**400)]
        for label, value in changes + ([("deep", _MARK)] if number % 4 == 0 else []):  # one path: a few will do
            tampered = copy.deepcopy(doc)
            _set(tampered, at, value)
            text = json.dumps(tampered)
            if label == "deep":
                text = text.replace(json.dumps(_MARK), "[" * DEEP + "]" * DEEP)
            yield f"{name} = {label}", text


def _get(doc: Any, at: tuple[Any, ...]) -> Any:
    for key in at:
        doc = doc[key]
    return doc


def _set(doc: Any, at: tuple[Any, ...], value: Any) -> None:
    _get(doc, at[:-1])[at[-1]] = value


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main(list(args))
    code = info.value.code
    return (code if isinstance(code, int) else 1), capsys.readouterr().err


def one_error(code: int, err: str, path: Path) -> str:
    assert code == 2, (code, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(path) in lines[0], err
    return lines[0]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real ``bench --save`` document (one small call, the shortest budget)."""
    path = tmp_path_factory.mktemp("saved") / "base.json"
    with pytest.raises(SystemExit) as info:
        main(["bench", str(ROOT / "examples" / "jit_sin.py") + ":fsin", "--shapes", "f32[8]", "--budget", "0.05",
              "--min-rounds", "3", "--max-warmup", "0.01", "--save", str(path), "--format", "json"])
    assert info.value.code == 0
    return dict(_shortened(json.loads(path.read_text())))


def _shortened(doc: Any) -> Any:
    """``doc`` with every list cut to 3 items (the timing samples): as valid, and quicker to tamper with."""
    if isinstance(doc, dict):
        return {key: _shortened(value) for key, value in doc.items()}
    if isinstance(doc, list):
        return [_shortened(value) for value in doc[:3]]
    return doc


def test_every_tampered_baseline_is_refused_naming_the_field_or_compared(
        baseline: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from jitscope.model.bench import BenchReport
    from jitscope.model.common import from_jsonable
    from jitscope.report.views.bench import bench_document
    from jitscope.report.writers.terminal import render_plain
    from jitscope.timing.compare import compare, load_report

    current = from_jsonable(BenchReport, baseline)
    path = tmp_path / "tampered.json"
    refused = accepted = 0
    for change, text in variants(baseline):
        path.write_text(text)
        try:
            report = load_report(path)
        except UsageError as exc:
            refused += 1
            field = change.split(" = ")[0].split(".")[0]
            assert str(path) in exc.message and field in exc.message and "\n" not in exc.one_line(), (change, exc)
            continue
        accepted += 1
        comparison = compare(current, report, threshold=0.1, baseline_name=str(path))
        render_plain(bench_document(dataclasses.replace(current, comparison=comparison)))
    assert refused > 100 and accepted > 0
    # as the user meets them: a few through the command line, in this process
    target = str(ROOT / "examples" / "jit_sin.py") + ":fsin"
    for change, text in list(variants(baseline))[::40]:
        path.write_text(text)
        try:
            load_report(path)
        except UsageError:
            one_error(*cli(capsys, "bench", target, "--shapes", "f32[8]", "--compare", str(path)), path)


@pytest.mark.parametrize("median", [0, -1, None, "NaN"])
def test_a_baseline_whose_median_could_never_regress_is_refused(
        baseline: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], median: Any) -> None:
    doc = copy.deepcopy(baseline)
    doc["rows"][0]["cached"]["blocked"]["median"] = float("nan") if median == "NaN" else median
    path = tmp_path / "base.json"
    path.write_text(json.dumps(doc))
    line = one_error(*cli(capsys, "bench", str(ROOT / "examples" / "jit_sin.py") + ":fsin", "--shapes", "f32[8]",
                          "--compare", str(path), "--fail-if-slower", "10%"), path)
    assert "rows[0].cached.blocked.median" in line


def test_every_tampered_run_report_is_refused_naming_the_field_or_merged(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from jitscope.hosts.load import load_reports

    good = tmp_path / "run.p0.json"
    good.write_text(json.dumps(to_jsonable(record(0))))
    doc = to_jsonable(record(1))
    path = tmp_path / "run.p1.json"
    refused = 0
    for change, text in variants(doc):
        path.write_text(text)
        try:
            load_reports([str(good), str(path)])
        except UsageError as exc:
            refused += 1
            assert "\n" not in exc.one_line(), (change, exc)
            if str(path) in exc.message:  # else one of the run checks (another run, a process missing)
                assert change.split(" = ")[0].split(".")[0] in exc.message, (change, exc)
            continue
        code, err = cli(capsys, "merge", str(good), str(path))
        assert code == 0, (change, err)
    assert refused > 50
    for change, text in list(variants(doc))[::25]:
        path.write_text(text)
        code, err = cli(capsys, "merge", str(good), str(path))
        assert code in (0, 2) and "Traceback" not in err, (change, err)
        if code == 2 and str(path) in err:
            one_error(code, err, path)


def test_every_tampered_per_process_bench_report_is_refused_naming_the_field_or_merged(
        baseline: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``merge`` of ``bench --processes`` reports: the same reader, the same promise."""
    from jitscope.hosts.bench import load_bench_reports, merge_bench

    def per_process(index: int) -> dict[str, Any]:
        return {**baseline, "process": {"index": index, "count": 2, "host": f"node{index}", "coordinator": "c:1"}}

    good = tmp_path / "bench.p0.json"
    good.write_text(json.dumps(per_process(0)))
    path = tmp_path / "bench.p1.json"
    refused = 0
    for change, text in variants(per_process(1)):
        path.write_text(text)
        try:
            loaded = load_bench_reports([str(good), str(path)])
        except UsageError as exc:
            refused += 1
            assert "\n" not in exc.one_line(), (change, exc)
            if "bench report" in exc.message and str(path) in exc.message:
                assert change.split(" = ")[0].split(".")[0] in exc.message, (change, exc)
            continue
        merge_bench(loaded)
    assert refused > 100
    for change, text in list(variants(per_process(1)))[::40]:
        path.write_text(text)
        code, err = cli(capsys, "merge", str(good), str(path))
        assert code in (0, 2) and "Traceback" not in err and "internal error" not in err, (change, err)


def test_a_document_nested_100000_deep_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * DEEP + "]" * DEEP)
    line = one_error(*cli(capsys, "merge", str(path)), path)
    assert "nested" in line


def test_a_value_of_2_62_bytes_made_inside_the_function_is_never_compiled(capsys: pytest.CaptureFixture[str]) -> None:
    """bool[2**62 - 1] is a valid spec, but sin makes float32 of it: XLA would abort the process compiling it
    (issue 30). trace shows the jaxpr and says why it did not compile; memory is one line, exit 2."""
    target, spec = str(ROOT / "examples" / "jit_sin.py") + ":fsin", f"bool[{2**62 - 1}]"
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        main(["trace", target, "--shapes", spec])
    out, err = capsys.readouterr()
    assert info.value.code == 0 and "not compiled: a value of 2**62 bytes or more (float32[" in out + err, (out, err)
    assert "sin" in out  # the jaxpr
    code, err = cli(capsys, "memory", target, "--shapes", spec)
    assert code == 2 and err.count("error: ") == 1 and "2**62 bytes or more" in err, err


@pytest.mark.parametrize("command", ["bench", "profile"])
def test_bench_and_profile_refuse_a_2_62_byte_value_made_inside_before_xla_sees_it(command: str, tmp_path: Path) -> None:
    """The argument is a scalar; the function broadcasts it to float32[2**31, 2**31] (2**64 bytes). XLA would
    abort the process compiling it (jaxlib 0.11+ on CPU: SIGFPE), or fail with a raw runtime error: the
    user's own first call is checked as JAX traces it (traced once, as always), one error line, exit 1."""
    program = tmp_path / "huge.py"
    program.write_text("import jax.numpy as jnp\n\n\ndef huge(x):\n"
                       "    return jnp.sin(jnp.broadcast_to(x, (2**31, 2**31)).astype(jnp.float32)).max()\n")
    result = run_cli(command, f"{program}:huge", "--shapes", "bool[]", "--budget", "0.02")
    assert result.returncode == 1, (result.returncode, result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "2**62 bytes or more (float32[2147483648,2147483648])" in errors[0], result.stderr
    assert "Traceback" not in result.stderr and "JaxRuntimeError" not in result.stderr
