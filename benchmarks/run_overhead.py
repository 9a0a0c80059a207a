"""What ``jitscope run`` adds to a training loop: the same program under ``python`` and under
``jitscope run``, side by side in one run (rounds alternate which goes first).

The program trains a model for ``--steps`` cached steps (one compile, then the C++ fast
path) and prints how long its step loop took. ``--model tiny|mlp`` is a plain-JAX MLP;
``--model nnx-gpt|linen-cnn|eqx-mlp|haiku-mlp|scan-rnn`` are real programs written as their
libraries' users write them (``benchmarks/targets/train_*.py``: a flax nnx GPT under
``nnx.jit``, a linen CNN with a ``TrainState``, an equinox MLP under ``eqx.filter_jit``, a haiku
MLP, a ``lax.scan`` RNN, all with optax), which compile dozens of JAX's eager ops besides their
step and trace far more Python than the MLP; ``--model real`` runs each in turn. Two ratios
per round, jitscope/python:

* loop: the cached steps alone. jitscope hooks only JAX's cache-miss path, so this should
  be 1.00 within noise (the target is <= 1.05);
* process: the whole process, start to exit, including jitscope's own start-up, the
  summary (rich is imported only then) and the one compile it observes;
* process CPU: the CPU time (user + system, all threads) of that process. It measures the
  same work as the wall time but is far less inflated when other work shares the machine,
  so it is the steadier figure on a busy one (both are printed).

Each process's minor page faults are printed too: a count, so load does not move it, and
where the frame stack is concerned (``jitscope/run/frame_stack.py``) the telling figure.

It also prints how many garbage collections of each generation the program ran under
each: with JAX loaded a full (generation 2) collection takes some 40 ms on a small VM,
so one more under ``jitscope run`` would be a large part of its overhead (see
``jitscope/run/collector.py``). Whether a few thousand more allocations bring one more
full collection depends on where in CPython's collection schedule the program ends
(a full collection comes about every 70,000 net allocations), so one fixed program can
be lucky or unlucky by ~40 ms. Each round therefore starts the program at another
phase of that schedule (it first makes 0 to 70,000 objects of cyclic garbage, evenly
spread over the rounds, the same number for every contender in a round): the median
over the rounds is what a program of this kind pays, not what one allocation count does.

``--baseline DIR`` adds a third contender, the jitscope package found under DIR (for
example an older revision: ``git archive REV jitscope | tar -x -C DIR``), so a change is
measured before/after side by side in the same run, on the same load.

``--no-effects`` adds ``jitscope run --no-effects`` as a contender: on Python 3.11 the
effect monitor (a ``sys.setprofile`` hook while the user's functions trace) is most of what
``jitscope run`` adds.

``--account`` measures instead what jitscope's own parts cost the program, from inside the process, where
the noise of a shared machine (the whole process moves +-5-10% between identical runs, more than jitscope
adds) hardly reaches: each program runs under ``python``, ``jitscope run --no-effects`` and ``jitscope run``
(``--rounds`` times each, medians), and the script prints

* start-up: the main thread's CPU time at the program's first line (the prelude prints it), jitscope's
  against python's. An upper bound: more than half of what jitscope imports there is the standard
  library's (``inspect``, ``dataclasses``, ``pathlib``, ``json``), which JAX imports later anyway
  (``python -X importtime`` of both: of jitscope's 89 ms of self times, 57 ms are modules ``import jax``
  loads too);
* the observer: the main thread's CPU time inside its hooks (``RunObserver``'s entry points, timed by a
  wrapper this script puts around them, ``ACCOUNT_PROBE``), its imports included;
* the effect monitor: the user's functions' trace time (from ``--out``'s JSON) with it against
  ``--no-effects``, plus the probe's time in setting the watch up and reading its record.

``--bytecode-cache`` runs every process with ``PYTHONPYCACHEPREFIX`` set to a fresh folder
(and ``PYTHONDONTWRITEBYTECODE`` unset) after one warm-up run of each contender, so every
module, jitscope's included, is loaded from cached bytecode, as in an installed package.
Without it, a checkout in an environment with ``PYTHONDONTWRITEBYTECODE=1`` compiles
jitscope's modules from source in every process (JAX and rich have theirs from pip), which
the script says in its header.

    python benchmarks/run_overhead.py [--model tiny|mlp|nnx-gpt|...|real] [--steps N] [--rounds 5] [--quick]
                                      [--baseline DIR] [--no-effects] [--bytecode-cache] [--account]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import LoadWatch, spread, watch_machine

#: Every program starts with this: at interpreter exit, after jitscope's summary, how many collections of each
#: generation ran; then the round's GC phase (cyclic garbage, counted until collected).
PRELUDE = '''
import atexit, gc, sys, time

print("START", time.thread_time())  # the main thread's CPU before the program's first line (--account)
atexit.register(lambda: print("GC", *(s["collections"] for s in gc.get_stats())))
for _ in range(int(sys.argv[2])):
    cycle = []
    cycle.append(cycle)
cycle = None
'''

#: ``--account``: ``python PROBE run ...`` is ``jitscope run ...`` with the main thread's CPU time inside the
#: observer's entry points (from JAX) and the effect watch's set-up and record summed, printed at exit as
#: ``ACCOUNT observer_s watch_s misses``. Calls made from inside a timed one are not timed again.
ACCOUNT_PROBE = '''
import atexit, sys, time
from jitscope.run.observer import RunObserver  # imported before the program under jitscope run anyway

spent = {"observer": 0.0, "watch": 0.0}
misses = [0]
busy = [False]
watch_methods_timed = [False]

def timed(owner, name, part):
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        if busy[0]:
            return original(*args, **kwargs)
        busy[0] = True
        start = time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            spent[part] += time.thread_time() - start
            busy[0] = False

    setattr(owner, name, wrapper)

for name in ("enter", "exit", "resume", "on_phase", "on_executable", "_finish"):
    timed(RunObserver, name, "observer")
begin, effect_watch = RunObserver._begin, RunObserver._effect_watch

def counted(self, miss):
    misses[0] += 1
    return begin(self, miss)

def watch_timed(self, fun):  # the effect monitor's modules are imported here, as without the probe
    made = effect_watch(self, fun)
    if not watch_methods_timed[0]:
        watch_methods_timed[0] = True
        from jitscope.effects.watch import EffectWatch

        timed(EffectWatch, "record", "watch")
        timed(EffectWatch, "finish", "watch")
    return made

RunObserver._begin = counted
timed(RunObserver, "_begin", "observer")
RunObserver._effect_watch = watch_timed
timed(RunObserver, "_effect_watch", "watch")
atexit.register(lambda: print("ACCOUNT", spent["observer"], spent["watch"], misses[0], file=sys.stderr))
from jitscope.cli.app import main

sys.argv[0] = "jitscope"
main()
'''

#: The plain-JAX MLP of ``--model tiny|mlp``, in the form of the ``benchmarks/targets/train_*.py`` programs.
MLP = '''
import jax, jax.numpy as jnp

@jax.jit
def train_step(params, x, y):
    def loss(p):
        h = jnp.tanh(x @ p[0])
        return jnp.mean((h @ p[1] - y) ** 2)
    grads = jax.grad(loss)(params)
    return [p - 0.01 * g for p, g in zip(params, grads)]

key = jax.random.PRNGKey(0)
state = [jax.random.normal(key, (D_IN, HIDDEN)) * 0.1, jax.random.normal(key, (HIDDEN, D_OUT)) * 0.1]
x, y = jnp.ones((BATCH, D_IN)), jnp.ones((BATCH, D_OUT))

def step(state):
    return train_step(state, x, y)
'''

#: Every program ends with this: one step to compile, then the timed cached steps.
LOOP = '''
state = step(state)
jax.block_until_ready(state)
start = time.perf_counter()
for _ in range(int(sys.argv[1])):
    state = step(state)
jax.block_until_ready(state)
print(f"LOOP {time.perf_counter() - start:.6f}")
'''

#: The plain MLP's sizes (batch, inputs, hidden units, outputs). ``tiny`` (~25 us a step on a 2-core VM): 3,000
#: steps take well under 0.1 s, so the process is mostly ``import jax`` and the compile, and the ratio is
#: what jitscope's fixed start-up costs such a program (the harshest case). ``mlp``: the sizes of
#: examples/mlp.py (128 x 784 -> 512 -> 10, ~1 ms a step here), a small but real training step.
MODELS: dict[str, tuple[int, int, int, int]] = {"tiny": (16, 32, 64, 1), "mlp": (128, 784, 512, 10)}

#: Real programs, written as their libraries' users write them (a model object and an optimizer state as the
#: step's arguments, optax): ``benchmarks/targets/train_<name>.py``, each ending with ``state`` and
#: ``step(state) -> state``. Each costs ~1-15 ms a step here, so the default 300 steps run for seconds.
TARGETS = Path(__file__).resolve().parent / "targets"
REAL_MODELS = ("nnx-gpt", "linen-cnn", "eqx-mlp", "haiku-mlp", "scan-rnn")


def program(model: str) -> str:
    """The text of the ``--model`` program: the prelude, the model and its step, the timed loop."""
    if model in MODELS:
        batch, d_in, hidden, d_out = MODELS[model]
        body = (MLP.replace("BATCH", str(batch)).replace("D_IN", str(d_in))
                .replace("HIDDEN", str(hidden)).replace("D_OUT", str(d_out)))
    else:
        body = (TARGETS / f"train_{model.replace('-', '_')}.py").read_text()
    return PRELUDE + body + LOOP


#: Net allocations between two full collections, about: CPython collects generation 0 every 700,
#: generation 1 every 10 of those, generation 2 every 10 of those (when the old generation grew by 25%).
GC_PERIOD = 70_000


def _children_usage() -> tuple[float, int]:
    """CPU seconds and minor page faults of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime, usage.ru_minflt


def bytecode_note(package: Path) -> str | None:
    """A warning when ``package`` is compiled from source in every process (no cached bytecode)."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        return None
    if (package / "__pycache__").is_dir():
        return None
    return (f"# bytecode  PYTHONDONTWRITEBYTECODE is set and {package} has no __pycache__: jitscope's modules "
            "are compiled from source in every process (an installed jitscope loads cached bytecode; "
            "--bytecode-cache measures that)")


def _environment(pythonpath: str | None, pycache: str | None) -> dict[str, str]:
    """A contender's environment: no colour; the bytecode cache folder and the jitscope package's folder
    when given."""
    env = {**os.environ, "NO_COLOR": "1"}
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pycache
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    return env


def run_once(command: list[str], pythonpath: str | None = None,
             pycache: str | None = None) -> tuple[float, float, float, str, int]:
    """(whole-process wall seconds, its CPU seconds, loop seconds the program reported, its collections,
    its minor page faults)."""
    env = _environment(pythonpath, pycache)
    cpu, faults = _children_usage()
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    wall = time.perf_counter() - start
    cpu_after, faults_after = _children_usage()
    cpu, faults = cpu_after - cpu, faults_after - faults
    loop = next(float(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("LOOP "))
    collections = next(("/".join(line.split()[1:]) for line in done.stdout.splitlines() if line.startswith("GC ")), "?")
    return wall, cpu, loop, collections, faults


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, help="cached steps per run (default 3000 for tiny and mlp, 300 else)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="500 steps, 2 rounds")
    parser.add_argument("--model", choices=[*MODELS, *REAL_MODELS, "real"], default="tiny",
                        help="the program: tiny (plain-JAX MLP, start-up dominated, the default), mlp "
                             "(examples/mlp.py's sizes), one of benchmarks/targets/train_*.py (needs flax, "
                             "equinox, haiku, optax), or real: each of those in turn")
    parser.add_argument("--baseline", metavar="DIR", help="also run the jitscope package under DIR")
    parser.add_argument("--no-effects", action="store_true",
                        help="also run jitscope run --no-effects (without the trace-time effect monitor)")
    parser.add_argument("--bytecode-cache", action="store_true",
                        help="load every module from cached bytecode (PYTHONPYCACHEPREFIX), as installed")
    parser.add_argument("--account", action="store_true",
                        help="instead: what start-up, the observer and the effect monitor each cost, from inside "
                             "the process")
    opts = parser.parse_args()
    models = REAL_MODELS if opts.model == "real" else (opts.model,)
    with tempfile.TemporaryDirectory() as tmp, watch_machine(uses_jax=True) as machine:
        for model in models:
            steps = opts.steps or (3000 if model in MODELS else 300)
            steps, rounds = (min(steps, 500), 2) if opts.quick else (steps, opts.rounds)
            (account if opts.account else measure)(model, steps, rounds, opts, Path(tmp), machine)


def account(model: str, steps: int, rounds: int, opts: argparse.Namespace, tmp: Path, machine: LoadWatch) -> None:
    """``--account``: jitscope's parts, each measured from inside the process (see the module docstring)."""
    from jitscope.model.run import USER

    script = tmp / f"train_{model.replace('-', '_')}.py"
    script.write_text(program(model))
    probe = tmp / "account_probe.py"
    probe.write_text(ACCOUNT_PROBE)
    report = tmp / "account.json"
    observed = [sys.executable, str(probe), "run", "--log", "none", "--out", str(report)]
    contenders = {"python": [sys.executable, str(script)], "no-effects": [*observed, "--no-effects", str(script)],
                  "jitscope": [*observed, str(script)]}
    pycache = str(tmp / "pycache") if opts.bytecode_cache else None
    if pycache:  # one warm-up run each fills the bytecode cache
        for command in contenders.values():
            _account_once([*command, "10", "0"], pycache)
    start: dict[str, list[float]] = {name: [] for name in contenders}
    cpu: dict[str, list[float]] = {name: [] for name in contenders}
    observer: dict[str, list[float]] = {name: [] for name in contenders}
    watch: list[float] = []
    traces: dict[str, list[float]] = {name: [] for name in contenders}
    misses = 0
    for index in range(rounds):
        names = list(contenders)
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            report.unlink(missing_ok=True)
            out, err, seconds = _account_once([*contenders[name], str(steps), str(GC_PERIOD * index // rounds)],
                                              pycache)
            start[name].append(next(float(line.split()[1]) for line in out.splitlines() if line.startswith("START ")))
            cpu[name].append(seconds)
            if name != "python":
                fields = next(line.split()[1:] for line in err.splitlines() if line.startswith("ACCOUNT "))
                observer[name].append(float(fields[0]))
                misses = int(fields[2])
                if name == "jitscope":
                    watch.append(float(fields[1]))
                functions = json.loads(report.read_text())["functions"]
                traces[name].append(sum(f["trace_s"] for f in functions if f["kind"] == USER))
        machine.sample()
    med = statistics.median
    base_cpu = med(cpu["python"])
    startup = med(start["no-effects"]) - med(start["python"])
    observed_s = med(observer["no-effects"])
    monitor = med(traces["jitscope"]) - med(traces["no-effects"]) + med(watch)
    total = startup + observed_s + monitor
    what = f"the {model} model {MODELS[model]}" if model in MODELS else f"benchmarks/targets/{script.name}"
    print(f"\njitscope's own work in {steps} cached steps of {what}, from inside the process "
          f"(main-thread CPU, medians of {rounds} rounds)")
    print(f"  start-up before the program's first line: python {med(start['python']) * 1e3:.0f} ms, "
          f"jitscope run {med(start['no-effects']) * 1e3:.0f} ms: {startup * 1e3:+.0f} ms (at most: part of it "
          "is modules JAX imports later anyway)")
    print(f"  the observer, in JAX's hooks ({misses} cache misses): {observed_s * 1e3:.0f} ms")
    print(f"  the effect monitor: the user's trace {med(traces['no-effects']) * 1e3:.0f} ms -> "
          f"{med(traces['jitscope']) * 1e3:.0f} ms, and {med(watch) * 1e3:.0f} ms setting it up and reading "
          f"its record: {monitor * 1e3:+.0f} ms")
    print(f"  in all {total * 1e3:+.0f} ms against the program's {base_cpu:.2f} s of process CPU under python: "
          f"{1 + total / base_cpu:.3f}x (the whole process, measured apart: "
          f"{med(cpu['jitscope']) / base_cpu:.3f}x in these rounds)")


def _account_once(command: list[str], pycache: str | None) -> tuple[str, str, float]:
    """The program's stdout, stderr and process CPU seconds."""
    env = _environment(None, pycache)
    before, _ = _children_usage()
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    after, _ = _children_usage()
    return done.stdout, done.stderr, after - before


def measure(model: str, steps: int, rounds: int, opts: argparse.Namespace, tmp: Path, machine: LoadWatch) -> None:
    """``rounds`` rounds of ``model``'s program under every contender, then their ratios to ``python``."""
    script = tmp / f"train_{model.replace('-', '_')}.py"
    script.write_text(program(model))
    plain = [sys.executable, str(script), str(steps)]
    observed = [sys.executable, "-m", "jitscope", "run", "--log", "none", str(script), str(steps)]
    # the round's GC phase, appended to each command line (see the module docstring)
    phases = [GC_PERIOD * index // rounds for index in range(rounds)]
    contenders: list[tuple[str, list[str], str | None]] = [("python", plain, None), ("jitscope", observed, None)]
    if opts.no_effects:
        contenders.append(("no-effects", [*observed[:4], "--no-effects", *observed[4:]], None))
    if opts.baseline:
        contenders.append(("baseline", observed, str(Path(opts.baseline).resolve())))
    pycache = str(tmp / "pycache") if opts.bytecode_cache else None
    note = None if pycache else bytecode_note(Path(__file__).resolve().parents[1] / "jitscope")
    if note:
        print(note)
    if pycache:  # one warm-up run each fills the bytecode cache
        for _, command, path in contenders:
            run_once([*command[:-1], "10", "0"], path, pycache)
    loops: dict[str, list[float]] = {name: [] for name, _, _ in contenders}
    walls: dict[str, list[float]] = {name: [] for name, _, _ in contenders}
    cpus: dict[str, list[float]] = {name: [] for name, _, _ in contenders}
    collections: dict[str, list[str]] = {name: [] for name, _, _ in contenders}
    faults: dict[str, list[int]] = {name: [] for name, _, _ in contenders}
    what = f"the {model} model {MODELS[model]}" if model in MODELS else f"benchmarks/targets/{script.name}"
    print(f"\n{steps} cached steps of {what} per run, {rounds} rounds ({', '.join(loops)} take turns going first)")
    for index in range(rounds):
        shift = index % len(contenders)
        for name, command, path in contenders[shift:] + contenders[:shift]:
            wall, cpu, loop, collected, faulted = run_once([*command, str(phases[index])], path, pycache)
            faults[name].append(faulted)
            collections[name].append(collected)
            walls[name].append(wall)
            cpus[name].append(cpu)
            loops[name].append(loop)
        machine.sample()
        print(f"round {index + 1}: " + "; ".join(
            f"{name} loop {loops[name][-1] * 1e3:.0f} ms, process {walls[name][-1]:.2f} s "
            f"({cpus[name][-1]:.2f} s CPU)" for name in loops))
    for name, loop_times in loops.items():
        if name == "python":
            continue
        loop_ratios = [a / b for a, b in zip(loop_times, loops["python"], strict=True)]
        wall_ratios = [a / b for a, b in zip(walls[name], walls["python"], strict=True)]
        cpu_ratios = [a / b for a, b in zip(cpus[name], cpus["python"], strict=True)]
        print(f"\n{name} run / python, cached-step loop: {spread(loop_ratios, 'rounds')}")
        print(f"{name} run / python, whole process:   {spread(wall_ratios, 'rounds')}")
        print(f"{name} run / python, process CPU:     {spread(cpu_ratios, 'rounds')}")
    print("\nfull (generation 2) garbage collections in the program, per round: " + "; ".join(
        f"{name} {' '.join(c.split('/')[-1] for c in seen)}" for name, seen in collections.items()))
    print("minor page faults of the process, median over the rounds: " + "; ".join(
        f"{name} {sorted(counts)[len(counts) // 2]:,}" for name, counts in faults.items()))


if __name__ == "__main__":
    main()
