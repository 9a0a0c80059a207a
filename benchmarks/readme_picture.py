"""The README's picture: a real ``jitscope trace`` run in a terminal, saved as SVG by rich.

Run: ``python benchmarks/readme_picture.py`` (from anywhere; ``--out FILE``, ``--lines N``). It runs
``jitscope trace examples/mlp.py:train_step --stages jaxpr`` in colour at 100 columns, keeps the first
``--lines`` lines (the call, what the function saw, the jaxpr by line of your code, the jaxpr's summary and
first equations) and writes them with ``Console(record=True).save_svg``. The timing in the picture is the
machine's; everything else is what any machine prints. Rerun it when the trace view changes.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text

ROOT = Path(__file__).resolve().parents[1]
COMMAND = ("trace", "examples/mlp.py:train_step", "--stages", "jaxpr")
WIDTH = 100


def terminal_output(lines: int) -> str:
    """The command's coloured output, as a 100-column terminal shows it, cut to ``lines`` lines."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM", "COLUMNS")}
    env.update(FORCE_COLOR="1", COLUMNS=str(WIDTH), TERM="xterm-256color", PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-m", "jitscope", *COMMAND], cwd=ROOT, env=env, capture_output=True,
                            text=True, check=False, timeout=600)
    if result.returncode != 0:
        sys.exit(f"error: jitscope {' '.join(COMMAND)} failed (exit {result.returncode}):\n{result.stderr}")
    return "\n".join(result.stdout.splitlines()[:lines])


def save_picture(ansi: str, out: Path) -> None:
    console = Console(record=True, width=WIDTH, file=io.StringIO(), force_terminal=True, color_system="truecolor")
    console.print(Text("$ jitscope " + " ".join(COMMAND), style="bold"))
    console.print(Text.from_ansi(ansi))  # long lines wrap, as in the terminal
    console.save_svg(str(out), title="jitscope trace")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "readme_trace.svg")
    parser.add_argument("--lines", type=int, default=39, help="lines of the output to keep (default 39)")
    args = parser.parse_args()
    save_picture(terminal_output(args.lines), args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
