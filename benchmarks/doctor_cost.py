"""What ``jitscope doctor`` costs on top of the program it diagnoses: ``python PROGRAM`` against
``jitscope doctor PROGRAM``, whole processes, side by side (rounds alternate which goes first).

The target (issue "doctor"): doctor takes at most the program's own time plus 30 seconds on the
examples. Per program it prints both medians, the added seconds (doctor - python, pair by pair) and
the ratio, wall and CPU. doctor runs the program once, under ``jitscope run``'s watch, and reads its
findings from that record, so what it adds is ``run``'s overhead plus the diagnosis and the report.

    python benchmarks/doctor_cost.py [--rounds 3] [--quick]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from machine import spread, watch_machine

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ("examples/train_loop.py", "examples/train_loop_fixed.py", "tests/targets/doctor/two_problems.py",
            "tests/targets/doctor/no_donation.py")  # the last: memory analysed, the donation tried
#: What the issue allows doctor to add to a program's own time.
BUDGET_S = 30.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one whole process."""
    env = {**os.environ, "NO_COLOR": "1", "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu")}
    cpu = _children_cpu()
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=True)
    return time.perf_counter() - start, _children_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one round of one program (a smoke test)")
    args = parser.parse_args()
    programs = PROGRAMS[:1] if args.quick else PROGRAMS
    rounds = 1 if args.quick else args.rounds
    worst = 0.0
    with watch_machine(uses_jax=True) as machine:
        print(f"\n{'program':40} {'python':>8} {'doctor':>8} {'added':>8}  ratio wall / CPU")
        for program in programs:
            python = [sys.executable, program]
            doctor = [sys.executable, "-m", "jitscope", "doctor", program]
            walls: dict[str, list[float]] = {"python": [], "doctor": []}
            cpus: dict[str, list[float]] = {"python": [], "doctor": []}
            for i in range(rounds):
                order = [("python", python), ("doctor", doctor)]
                for name, command in order if i % 2 == 0 else order[::-1]:
                    wall, cpu = timed(command)
                    walls[name].append(wall)
                    cpus[name].append(cpu)
                machine.sample()
            added = [d - p for d, p in zip(walls["doctor"], walls["python"])]
            worst = max(worst, statistics.median(added))
            print(f"{program:40} {statistics.median(walls['python']):7.2f}s {statistics.median(walls['doctor']):7.2f}s "
                  f"{statistics.median(added):+7.2f}s  "
                  f"{spread([d / p for d, p in zip(walls['doctor'], walls['python'])], 'rounds')} / "
                  f"{statistics.median([d / p for d, p in zip(cpus['doctor'], cpus['python'])]):.3f}")
    verdict = "within" if worst <= BUDGET_S else "OVER"
    print(f"\nworst added time {worst:+.2f} s: {verdict} the budget of the program's own time + {BUDGET_S:g} s")


if __name__ == "__main__":
    main()
