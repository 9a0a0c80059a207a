"""Are ``jitscope doctor``'s gains right? Each planted problem's first finding against the fix applied by hand.

For each program in tests/targets/doctor/ with one planted problem, ``benchmarks/targets/doctor_fixed/``
holds the same program with doctor's change made by hand. Per program: doctor's gain for its first
finding (measured or estimated, as it labels it), and what the fix bought: ``python PROGRAM`` against
``python FIXED``, whole processes, rounds alternating which goes first, the median of the pairwise
differences. The issue's target: a measured gain within +-30% of what the fix buys.

    python benchmarks/doctor_gains.py [--rounds 5] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import watch_machine

ROOT = Path(__file__).resolve().parents[1]
PLANTED = ROOT / "tests" / "targets" / "doctor"
FIXED = ROOT / "benchmarks" / "targets" / "doctor_fixed"
PROGRAMS = ("static_value.py", "jit_in_loop.py", "ragged.py", "unrolled.py", "sync.py")
TOLERANCE = 0.30
ENV = {**os.environ, "NO_COLOR": "1", "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu")}


def wall(program: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, program.name], cwd=program.parent, env=ENV, capture_output=True, check=True)
    return time.perf_counter() - start


def first_finding(program: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "doctor.json"
        subprocess.run([sys.executable, "-m", "jitscope", "doctor", "--out", str(out), program.name],
                       cwd=program.parent, env=ENV, capture_output=True, check=True)
        return json.loads(out.read_text())["findings"][0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one round of one program (a smoke test)")
    args = parser.parse_args()
    programs = PROGRAMS[:1] if args.quick else PROGRAMS
    rounds = 1 if args.quick else args.rounds
    outside = 0
    with watch_machine(uses_jax=True) as machine:
        print(f"\n{'program':16} {'finding':24} {'gain':>10} {'bought':>8} {'ratio':>6}  verdict")
        for name in programs:
            planted, fixed = PLANTED / name, FIXED / name
            gains, bought = [], []
            kind, label = "", ""
            for i in range(rounds):
                finding = first_finding(planted)
                kind, label = finding["kind"], finding["gain"]
                gains.append(finding["gain_s"])
                pair = [planted, fixed] if i % 2 == 0 else [fixed, planted]
                times = {p: wall(p) for p in pair}
                bought.append(times[planted] - times[fixed])
                machine.sample()
            gain, buy = statistics.median(gains), statistics.median(bought)
            ratio = gain / buy if buy > 0 else float("inf")
            within = abs(ratio - 1) <= TOLERANCE
            outside += label == "measured" and not within
            verdict = ("within +-30%" if within else "outside +-30%") + ("" if label == "measured" else
                                                                          f" ({label}: not held to it)")
            print(f"{name:16} {kind:24} {gain:9.3f}s {buy:7.3f}s {ratio:6.2f}  {verdict}")
    print(f"\n{outside} measured gain(s) outside +-{TOLERANCE:.0%} of what the fix bought")


if __name__ == "__main__":
    main()
