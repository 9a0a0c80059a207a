"""What does jitscope cost on top of the JAX work it shows?

1. ``jitscope trace`` of two bundled examples (a small MLP step, where process start-up
   dominates, and a 4-layer transformer encoder) against a plain Python script doing the same
   JAX work (import jax, trace, lower, compile, print jaxpr/StableHLO/HLO and the analyses),
   each in a fresh process, alternating (the order rotates each run), N runs. Each run gives
   one ratio per mode, both sides measured back to back under the same load; the median of
   those ratios is the figure, printed with its min and max. Target: ratio <= 1.2. The ratio
   of the processes' CPU time (user + system) is printed too: it counts the same work but is
   far less inflated than wall time when other work shares the machine.
   A third target is a real model, ``tests/targets/models/nnx_gpt.py:train_step`` (a two-block flax
   nnx GPT trained with optax adamw, its arguments objects from ``JITSCOPE_EXAMPLES``), against the
   same plain script calling ``train_step.trace(*args)`` (nnx.jit's own trace, which JAX's
   ``jit(f).trace`` becomes for it). Target: ratio <= 1.1 (issue 24).
2. Rendering a 20,000-equation jaxpr (record conversion + rendering) against
   ``str(jaxpr)``. Target: ratio <= 3.

``--installed`` runs the checkout as a regular install does: a wheel built from it, installed into a
scratch folder with its bytecode compiled (an editable install, on a machine that sets
``PYTHONDONTWRITEBYTECODE``, compiles jitscope's modules from source in every process).
``--targets matmul`` times a held-out 512x512 matmul (``benchmarks/targets/matmul.py``), where
jitscope's own start-up is most of what it adds. Target: ratio <= 1.05 (issue 18).

``--baseline DIR`` adds a fourth contender: ``jitscope trace`` of the checkout in DIR (run in DIR,
for example ``git worktree add DIR REV``; with ``--installed``, a regular install of it), so a change is
measured before/after in the same run.

    python benchmarks/trace_overhead.py [--runs 7] [--eqns 20000] [--render-rounds 5] [--baseline DIR]
    python benchmarks/trace_overhead.py --quick    # smoke run: 1 run, no warm-up, a 2,000-equation jaxpr
    python benchmarks/trace_overhead.py --targets models --runs 9   # the real model only (needs flax, optax)
    python benchmarks/trace_overhead.py --targets matmul --installed --runs 9   # start-up, as installed
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from machine import LoadWatch, spread, watch_machine

PLAIN = """
import sys
import jax
sys.path.insert(0, {examples!r})
module = __import__({module!r})

class _Dtype:
    def __init__(self, name):
        self.name = name
    def __getitem__(self, dims):
        dims = dims if isinstance(dims, tuple) else (dims,)
        return jax.ShapeDtypeStruct(dims, self.name)

args = eval({spec!r}, {{"f32": _Dtype("float32"), "i32": _Dtype("int32")}})
traced = getattr(module, {fn!r}).trace(*args)
print(traced.jaxpr)
lowered = traced.lower()
print(lowered.as_text(dialect="stablehlo"))
compiled = lowered.compile()
print(compiled.as_text())
print(compiled.cost_analysis(), compiled.memory_analysis())
"""

#: The same JAX work for a target whose example arguments are objects (a model, an optimizer).
PLAIN_OBJECTS = """
import sys
import jax
sys.path.insert(0, {folder!r})
module = __import__({module!r})
args = module.JITSCOPE_EXAMPLES[{fn!r}]["args"]
fn = getattr(module, {fn!r})
# A library's jit (nnx.jit) traces its own program (the in-place updates returned); jax.jit otherwise.
traced = fn.trace(*args) if hasattr(fn, "trace") else jax.jit(fn).trace(*args)
print(getattr(traced, "traced", traced).jaxpr)
lowered = traced.lower()
print(lowered.as_text(dialect="stablehlo"))
compiled = lowered.compile()
print(compiled.as_text())
print(compiled.cost_analysis(), compiled.memory_analysis())
"""

#: (folder, module, function, target ratio): a small model where start-up dominates, a bigger one, and a
#: real flax model whose arguments are objects.
EXAMPLE_TARGETS = (("examples", "mlp", "train_step", 1.2), ("examples", "transformer", "encode", 1.2))
MODEL_TARGETS = (("tests/targets/models", "nnx_gpt", "train_step", 1.1),)
MATMUL_TARGETS = (("benchmarks/targets", "matmul", "matmul", 1.05),)


def install_checkout(scratch: Path, checkout: Path = ROOT) -> dict[str, str]:
    """Build a wheel of ``checkout``, install it into ``scratch`` with compiled bytecode; the environment that
    makes ``python -P -m jitscope`` run it (``-P``: not the checkout in the working directory)."""
    scratch.mkdir(parents=True, exist_ok=True)
    site = scratch / "site"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--wheel-dir", str(scratch), str(checkout)], check=True)
    wheel = next(scratch.glob("jitscope-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
                   check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(site / "jitscope")], check=True)
    return {**os.environ, "PYTHONPATH": str(site)}


#: The environment of the jitscope commands (``--installed``: the scratch install's), and of the baseline's.
JITSCOPE_ENV: dict[str, str] | None = None
BASELINE_ENV: dict[str, str] | None = None


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


#: CPU seconds (user + system) of each command ``_time`` ran, in order.
CPU_TIMES: list[float] = []


def _time(cmd: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> float:
    cpu = _children_cpu()
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, env=env)
    wall = time.perf_counter() - start
    CPU_TIMES.append(_children_cpu() - cpu)
    return wall


def bytecode_note() -> str | None:
    """A warning when jitscope is compiled from source in every process (no cached bytecode)."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        return None
    if (ROOT / "jitscope" / "__pycache__").is_dir():
        return None
    return (f"# bytecode  PYTHONDONTWRITEBYTECODE is set and {ROOT / 'jitscope'} has no __pycache__: jitscope's "
            "modules are compiled from source in every process (an installed jitscope loads cached bytecode)")


def plain_script(folder: str, module: str, fn: str) -> str:
    """The script doing the JAX work of ``jitscope trace FOLDER/MODULE.py:FN`` with JAX's own API."""
    if folder != "examples":  # example arguments that are objects: the module builds them
        return PLAIN_OBJECTS.format(folder=str(ROOT / folder), module=module, fn=fn)
    sys.path.insert(0, str(ROOT / folder))
    spec = __import__(module).JITSCOPE_EXAMPLES[fn]
    return PLAIN.format(examples=str(ROOT / folder), module=module, fn=fn, spec=f"({spec},)")


def measure_cli(
    folder: str, module: str, fn: str, runs: int, machine: LoadWatch, *, warm: bool = True,
    baseline: Path | None = None,
) -> dict[str, list[float]]:
    """Wall times of ``jitscope trace``, of it with ``--no-effects`` and of the plain script, per run."""
    plain = plain_script(folder, module, fn)
    jitscope_cmd = [sys.executable, *(("-P",) if JITSCOPE_ENV is not None else ()), "-m", "jitscope", "trace",
                    f"{folder}/{module}.py:{fn}"]
    commands = {
        "jitscope": jitscope_cmd,
        "no_effects": [*jitscope_cmd, "--no-effects"],
        "plain": [sys.executable, "-c", plain],
    }
    where = {name: ROOT for name in commands}
    envs = {"jitscope": JITSCOPE_ENV, "no_effects": JITSCOPE_ENV, "plain": None}
    if baseline is not None:  # installed: its own install; else python -m finds the jitscope of its working directory
        commands["baseline"], envs["baseline"] = jitscope_cmd, BASELINE_ENV
        where["baseline"] = ROOT if BASELINE_ENV is not None else baseline
    if warm:  # warm the OS file cache for both
        for name, cmd in commands.items():
            if name != "no_effects":
                _time(cmd, where[name], envs[name])
    times: dict[str, list[float]] = {name: [] for name in commands}
    times.update({f"{name} cpu": [] for name in commands})
    names = list(commands)
    for i in range(runs):
        # Rotate the order so that no mode always runs first (or right after the same one).
        for name in names[i % len(names):] + names[:i % len(names)]:
            times[name].append(_time(commands[name], where[name], envs[name]))
            times[f"{name} cpu"].append(CPU_TIMES[-1])
        machine.sample()
    return times


def ratios(times: dict[str, list[float]], mode: str, suffix: str = "") -> list[float]:
    """Per-run ratio of ``mode`` to the plain script (the two ran back to back); suffix " cpu": CPU times."""
    return [ours / plain for ours, plain in zip(times[mode + suffix], times["plain" + suffix], strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--eqns", type=int, default=20000)
    parser.add_argument("--render-rounds", type=int, default=5)
    parser.add_argument("--baseline", type=Path, metavar="DIR", help="also trace with the jitscope checkout in DIR")
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 run without warm-up, 2,000 equations, 2 rounds")
    parser.add_argument("--targets", choices=("all", "examples", "models", "matmul"), default="all",
                        help="which trace targets to time (models: the flax nnx GPT; needs flax and optax; matmul: "
                        "a held-out 512x512 matmul)")
    parser.add_argument("--installed", action="store_true",
                        help="run jitscope from a regular install of the checkout (a wheel, bytecode compiled)")
    opts = parser.parse_args()
    if opts.quick:
        opts.runs, opts.eqns, opts.render_rounds = 1, 2000, 2
    if opts.runs < 1:
        parser.error("--runs must be at least 1")

    global JITSCOPE_ENV, BASELINE_ENV
    with watch_machine(uses_jax=True) as machine, tempfile.TemporaryDirectory() as scratch:
        if opts.installed:
            JITSCOPE_ENV = install_checkout(Path(scratch) / "checkout")
            if opts.baseline:
                BASELINE_ENV = install_checkout(Path(scratch) / "baseline", opts.baseline.resolve())
            print("# install   jitscope from a wheel of the checkout, bytecode compiled (python -P -m jitscope)")
        else:
            note = bytecode_note()
            if note:
                print(note)
        if opts.targets == "matmul":
            targets = MATMUL_TARGETS
        else:
            targets = (EXAMPLE_TARGETS if opts.targets != "models" else ()) + (
                MODEL_TARGETS if opts.targets != "examples" and _have("flax", "optax") else ())
        for folder, module, fn, target in targets:
            times = measure_cli(folder, module, fn, opts.runs, machine, warm=not opts.quick,
                                baseline=opts.baseline.resolve() if opts.baseline else None)
            med = {name: statistics.median(values) for name, values in times.items()}
            print(f"trace CLI   {module}.py:{fn:<11} jitscope {med['jitscope']:.2f} s   plain script "
                  f"{med['plain']:.2f} s   with --no-effects {med['no_effects']:.2f} s (medians)")
            print(f"            jitscope / plain      ratio {spread(ratios(times, 'jitscope'))} (target <= {target})")
            print(f"            --no-effects / plain  ratio {spread(ratios(times, 'no_effects'))}")
            print(f"            jitscope / plain      CPU   {spread(ratios(times, 'jitscope', ' cpu'))}")
            print(f"            --no-effects / plain  CPU   {spread(ratios(times, 'no_effects', ' cpu'))}")
            if opts.baseline:
                print(f"            baseline / plain      ratio {spread(ratios(times, 'baseline'))}")
                print(f"            baseline / plain      CPU   {spread(ratios(times, 'baseline', ' cpu'))}")
        if opts.targets in ("models", "matmul"):
            return

        from render_jaxpr import measure_render

        r = measure_render(opts.eqns, max(1, opts.render_rounds))
        print(f"render      {r.n_eqns} equations: str(jaxpr) {r.best('str_jaxpr') * 1e3:.0f} ms; "
              f"record {r.best('record') * 1e3:.0f} ms (best of {len(r.rounds['record'])} rounds)")
        for key, label in (("text", "plain text"), ("rich_plain", "rich, piped"),
                           ("rich_color", "rich, terminal colour")):
            print(f"            {label:<22} ratio {r.ratio(key):.2f} (target <= 3); per round "
                  f"{spread(r.per_round_ratios(key), 'rounds')}")


def _have(*modules: str) -> bool:
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        print(f"# skipped the model target: {', '.join(missing)} not installed")
    return not missing


if __name__ == "__main__":
    main()
