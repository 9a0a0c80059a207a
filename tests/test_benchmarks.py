"""The benchmark scripts' plumbing: the machine header, the load warning, and lint_throughput
without flake8. No timing is asserted: the figures themselves are for a quiet machine."""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"


@pytest.fixture(scope="module")
def machine() -> ModuleType:
    """benchmarks/machine.py, imported from its file (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location("jitscope_benchmarks_machine", BENCHMARKS / "machine.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building the class
    spec.loader.exec_module(module)
    return module


def test_header_names_the_machine_python_and_load(machine: ModuleType) -> None:
    header = machine.render_header(machine.describe_machine())
    names = [line.split()[1] for line in header.splitlines()]
    assert names == ["date", "cpu", "memory", "os", "python", "load"]
    assert " UTC" in header
    assert f"{os.cpu_count()} logical cores" in header
    assert "GiB" in header
    assert platform.release() in header
    assert platform.python_version() in header
    assert "(1/5/15 min)" in header or "unknown" in header.splitlines()[-1]
    assert "jax" not in names  # JAX only when the script uses it


def test_header_names_jax_and_its_backend_when_asked(machine: ModuleType) -> None:
    import jax

    header = machine.render_header(machine.describe_machine(uses_jax=True))
    (line,) = [line for line in header.splitlines() if line.startswith("# jax ")]
    assert jax.__version__ in line
    assert f"backend {jax.default_backend()}" in line


def test_busy_warning_compares_other_work_with_half_the_cores(machine: ModuleType) -> None:
    # (1-minute load average, cores this run kept busy): the run's own share is not other work.
    quiet = machine.LoadWatch(cores=4, readings=[(0.5, 0.0), (2.5, 2.0)])
    busy = machine.LoadWatch(cores=4, readings=[(0.5, 0.0), (4.5, 2.0)])
    assert not quiet.busy()
    assert machine.BUSY_WARNING not in quiet.render_footer()
    assert busy.busy()
    assert busy.render_footer().splitlines()[-1] == machine.BUSY_WARNING
    assert "rerun on a quiet machine" in machine.BUSY_WARNING


def test_spread_prints_median_min_max_and_count(machine: ModuleType) -> None:
    assert machine.spread([1.11, 0.97, 1.02]) == "median 1.020 (min 0.970, max 1.110, 3 runs)"
    assert machine.spread([2.0], "rounds") == "median 2.000 (min 2.000, max 2.000, 1 round)"
    eight = machine.spread([float(x) for x in range(1, 9)], "pairs")
    assert eight.startswith("median 4.500 (min 1.000, max 8.000, IQR ")
    assert machine.spread([]) == "no data"


def test_median_interval_is_the_binomial_order_statistics(machine: ModuleType) -> None:
    """The distribution-free 95% interval for a median: ranks 2 and 8 of 9, 6 and 15 of 20 (the textbook table),
    whatever the values; none under 9 values, and ``spread`` prints it from 9 on."""
    assert machine.median_interval([float(x) for x in range(9, 0, -1)]) == (2.0, 8.0)
    assert machine.median_interval([float(x) for x in range(1, 21)]) == (6.0, 15.0)
    assert machine.median_interval([float(x) for x in range(1, 31)]) == (10.0, 21.0)
    assert machine.median_interval([1.0] * 8) is None
    assert "median's 95% CI 2.000-8.000, 9 runs" in machine.spread([float(x) for x in range(1, 10)])


def test_lint_throughput_runs_without_flake8(tmp_path: Path) -> None:
    """flake8 hidden (not on PATH, not importable): one explanatory line, the floor comparison, exit 0."""
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text('import sys\nsys.modules["flake8"] = None  # import flake8 fails\n')
    env = {**os.environ, "PATH": str(tmp_path), "PYTHONPATH": str(hide)}
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / "lint_throughput.py"), "--path", "tests/targets/lint_clean",
         "--repeat", "1"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Traceback" not in output
    assert (
        "flake8 is not installed: `python -m pip install flake8` to compare against it; "
        "reporting jitscope against the parse floor only"
    ) in result.stdout
    assert "jitscope / bare parse  = ratio median " in result.stdout
    assert "jitscope / flake8" not in result.stdout
    assert "# load avg" in result.stdout and "# python" in result.stdout


def test_memory_vs_device_reports_the_peak_and_says_when_the_device_has_none() -> None:
    """On CPU (no memory_stats): each workload's reported peak, and that the device figure is missing."""
    import jax

    if jax.devices()[0].memory_stats():
        pytest.skip("this device reports memory statistics: the comparison itself runs")
    result = subprocess.run([sys.executable, str(BENCHMARKS / "memory_vs_device.py")], cwd=ROOT, capture_output=True,
                            text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["memory_peak.train_step", "rnn_step"]
    assert all(" MiB   device: memory_stats() is not available on cpu" in line for line in lines), lines


def _gpu_check() -> ModuleType:
    spec = importlib.util.spec_from_file_location("jitscope_benchmarks_gpu_check", BENCHMARKS / "gpu_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_gpu_check_quick_runs_every_check_and_skips_the_gpu_rows_on_cpu(tmp_path: Path) -> None:
    """The CPU smoke run CI does, so the GPU check cannot rot before a GPU arrives: every check runs what
    CPU allows; the rows a GPU needs say so; jitscope run's compile count agrees with JAX's log."""
    import jax

    if jax.default_backend() != "cpu":
        pytest.skip("the smoke run's expectations are the CPU's")
    result = subprocess.run([sys.executable, str(BENCHMARKS / "gpu_check.py"), "--quick", "--out", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    doc = json.loads((tmp_path / "gpu_check.json").read_text())
    rows = doc["rows"]
    checks = {row["check"] for row in rows}
    assert checks == {"bench", "profile", "memory", "run", "trace", "sharding"}
    assert all(row["status"] in ("pass", "FAIL") or row["status"].startswith("skipped: ") for row in rows)
    by = {(row["check"], row["case"]): row for row in rows}
    for name in ("matmul", "convolution", "transformer step"):
        bench = by[("bench", name)]["values"]
        assert bench["jitscope_s"] > 0 and bench["timeit_s"] > 0 and bench["unblocked_s"] > 0
        assert by[("trace", name)]["status"].startswith("skipped: no GPU")
        assert by[("profile", name)]["values"]["events_from"] == "CPU thunks"
    assert by[("run", "examples/train_loop.py")]["status"] == "pass"  # equal counts, not a timing
    memory = [row for row in rows if row["check"] == "memory"]
    assert memory and all(row["status"].startswith("skipped: no GPU") for row in memory)
    table = (tmp_path / "gpu_check.md").read_text().splitlines()
    assert table[0].startswith("GPU check on cpu") and "(--quick)" in table[0]
    assert len([line for line in table if line.startswith("| ") and "---" not in line]) == len(rows) + 1


def test_gpu_check_says_what_to_install_when_jax_cannot_use_the_gpu(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    check = _gpu_check()
    monkeypatch.setattr(check, "gpu_present", lambda: True)
    monkeypatch.delenv("JAX_PLATFORMS", raising=False)
    assert check.main(["--quick", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: this machine has an NVIDIA GPU but JAX")
    assert 'pip install -U "jax[cuda13]"' in err[0]
    assert not (tmp_path / "gpu_check.json").exists()


def test_gpu_check_row_says_when_a_case_does_not_fit_the_device(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    check = _gpu_check()
    monkeypatch.setattr(check, "_bytes_limit", lambda device: 1024)  # a 1 KiB device: no case fits
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    assert check.main(["--quick", "--only", "bench", "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "gpu_check.json").read_text())["rows"]
    assert [row["case"] for row in rows] == ["matmul", "convolution", "transformer step"]
    assert all(row["status"] == "skipped: the device ran out of memory for this case" for row in rows)
    assert "needs about" in rows[0]["detail"] and "the device has 0.0 GiB" in rows[0]["detail"]


def test_doctor_cost_quick_times_python_against_doctor_on_one_example() -> None:
    result = subprocess.run([sys.executable, str(BENCHMARKS / "doctor_cost.py"), "--quick"], capture_output=True,
                            text=True, timeout=600, check=False, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    (row,) = [line for line in result.stdout.splitlines() if line.startswith("examples/train_loop.py")]
    python_s, doctor_s = (float(cell.rstrip("s")) for cell in row.split()[1:3])
    assert python_s > 0 and doctor_s > 0
    assert "the budget of the program's own time + 30 s" in result.stdout


@pytest.fixture(scope="module")
def run_overhead(machine: ModuleType) -> ModuleType:
    """benchmarks/run_overhead.py, imported from its file (it imports machine.py by its plain name)."""
    sys.modules.setdefault("machine", machine)
    spec = importlib.util.spec_from_file_location("jitscope_benchmarks_run_overhead", BENCHMARKS / "run_overhead.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_run_overhead_programs_end_with_a_state_and_a_step(run_overhead: ModuleType) -> None:
    """Every --model program parses, and its body defines what the timed loop uses (``state``, ``step``)."""
    import ast

    for model in [*run_overhead.MODELS, *run_overhead.REAL_MODELS]:
        tree = ast.parse(run_overhead.program(model))
        defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)} | {
            target.id for node in tree.body if isinstance(node, ast.Assign)
            for target in node.targets if isinstance(target, ast.Name)}
        assert {"step", "state"} <= defined, model


def test_run_overhead_account_names_each_part_of_jitscopes_cost() -> None:
    """``--account`` on the tiny MLP: start-up, the observer (with the cache misses its probe counted), the effect
    monitor and the sum, each a number that parses; the observer did some work and the step was traced."""
    import re

    result = subprocess.run([sys.executable, str(BENCHMARKS / "run_overhead.py"), "--account", "--quick",
                             "--steps", "20"], capture_output=True, text=True, timeout=600, check=False, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert re.search(r"start-up before the program's first line: python \d+ ms, jitscope run \d+ ms: [+-]\d+ ms", out)
    observer = re.search(r"the observer, in JAX's hooks \((\d+) cache misses\): (\d+) ms", out)
    assert observer is not None and int(observer[1]) >= 1, out
    trace = re.search(r"the user's trace (\d+) ms -> (\d+) ms", out)
    assert trace is not None and int(trace[1]) > 0, out
    assert re.search(r"in all [+-]\d+ ms against the program's [\d.]+ s of process CPU under python: [\d.]+x", out)


def test_run_overhead_scan_rnn_trains(run_overhead: ModuleType) -> None:
    """The one real program that needs only JAX and optax takes two steps, in process (the others need flax,
    equinox and haiku, and seconds each: the benchmark runs them)."""
    pytest.importorskip("optax")
    import jax

    namespace: dict[str, object] = {"__name__": "train_scan_rnn"}
    exec((run_overhead.TARGETS / "train_scan_rnn.py").read_text(), namespace)
    step, state = namespace["step"], namespace["state"]
    for _ in range(2):
        state = step(state)  # type: ignore[operator]
    params, _ = jax.block_until_ready(state)
    assert set(params) == {"w_in", "w_h", "w_out"}


@pytest.mark.parametrize("program", ["ragged.py", "unrolled.py", "sync.py"])  # the fixes that rewrite the computation
def test_doctor_gains_fixed_programs_compute_what_the_planted_ones_do(program: str) -> None:
    """benchmarks/doctor_gains.py times each planted problem against its fix by hand: the fix must change the
    cost, not the result."""
    def printed(path: Path) -> list[float]:
        out = subprocess.run([sys.executable, path.name], cwd=path.parent, capture_output=True, text=True,
                             timeout=300, check=True, env={**os.environ, "JAX_PLATFORMS": "cpu"}).stdout
        return [float(word) for word in out.split() if word.replace(".", "", 1).replace("-", "", 1).isdigit()]

    planted = printed(ROOT / "tests" / "targets" / "doctor" / program)
    fixed = printed(BENCHMARKS / "targets" / "doctor_fixed" / program)
    assert planted and fixed == pytest.approx(planted, rel=1e-5)
