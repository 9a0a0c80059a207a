"""Runs jitscope commands in ONE process started with 8 CPU devices; prints their results as JSON.

The device count is fixed when JAX starts, and the test process already has one device, so
the sharding tests run this script in a subprocess (one JAX start for all of them).
"""

from __future__ import annotations

import json
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import contextlib
import io

from jitscope.cli.app import main as jitscope_main

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples")
T = os.path.join(HERE, "sharded_targets.py")

COMMANDS: dict[str, list[str]] = {
    "dp": ["trace", f"{EXAMPLES}/sharded_data_parallel.py:train_step", "--mesh", "data=8", "--stages", "memory",
           "-f", "json"],
    "tp": ["trace", f"{EXAMPLES}/sharded_tensor_parallel.py:mlp_layer", "--mesh", "data=4,model=2", "--stages",
           "memory", "-f", "json"],
    "tp_example_mesh": ["trace", f"{EXAMPLES}/sharded_tensor_parallel.py:mlp_layer", "--stages", "memory", "-f",
                        "json"],
    "tp_text": ["trace", f"{EXAMPLES}/sharded_tensor_parallel.py:mlp_layer", "--mesh", "data=4,model=2",
                "--stages", "memory"],
    "shard_map": ["trace", f"{EXAMPLES}/sharded_shard_map.py:normalise_and_shift", "--mesh", "data=8", "--stages",
                  "memory", "-f", "json"],
    "fsdp": ["trace", f"{T}:fsdp_scan", "--mesh", "data=4", "--stages", "memory", "-f", "json", "-s",
             "f32[3,256,256]@(None,data,None), f32[32,256]@(data,None)"],
    "gather": ["trace", f"{T}:gather_all", "--mesh", "data=8", "--stages", "memory", "-f", "json", "-s",
               "f32[2048,1024]@(data,None)"],
    "cumsum": ["trace", f"{T}:running_total", "--mesh", "data=8", "--stages", "memory", "-f", "json", "-s",
               "f32[64,16]@(data,None)"],
    "example_sds": ["trace", f"{T}:scale", "--stages", "memory", "-f", "json"],
    "declared": ["trace", f"{T}:declared", "--stages", "memory", "-f", "json", "-s", "f32[64]"],
    "markdown": ["trace", f"{EXAMPLES}/sharded_data_parallel.py:train_step", "--mesh", "data=8", "--stages",
                 "memory", "-f", "markdown"],
    "lint": ["lint", T, "--trace", f"{T}:total", "--mesh", "data=4", "--select", "JS306", "-f", "json",
             "-s", "f32[64,8]@(data,None)", "-s", "f32[64,8]@(None,data)", "-s", "f32[64,8]@(None,data)"],
    "bench": ["bench", f"{EXAMPLES}/sharded_data_parallel.py:train_step", "--mesh", "data=8", "--budget", "0.05",
              "--min-rounds", "2", "--no-dispatch", "-f", "json"],
    "profile": ["profile", f"{EXAMPLES}/sharded_tensor_parallel.py:mlp_layer", "--mesh", "data=4,model=2",
                "--calls", "3", "--budget", "0.05"],
    "unsharded": ["trace", f"{T}:total", "--mesh", "data=8", "--stages", "memory", "-f", "json", "-s", "f32[64]"],
    # errors: one line, exit 2
    "too_late": ["trace", f"{T}:scale", "--devices", "16", "-s", "f32[8]"],
    "bad_mesh": ["trace", f"{T}:total", "--devices", "8", "--mesh", "data=3", "-s", "f32[8]"],
    "bad_syntax": ["trace", f"{T}:scale", "--mesh", "data:8", "-s", "f32[8]"],
    "no_mesh": ["trace", f"{T}:total", "-s", "f32[8]@(data)"],
    "unknown_axis": ["trace", f"{T}:total", "--mesh", "data=8", "-s", "f32[8]@(model)"],
    "not_divisible": ["trace", f"{T}:total", "--mesh", "data=8", "-s", "f32[12]@(data)"],
    "rank": ["trace", f"{T}:total", "--mesh", "data=8", "-s", "f32[8]@(data,None)"],
}


def main() -> None:
    wanted = sys.argv[1:] or list(COMMANDS)
    out = {}
    real_stdout = sys.stdout
    for name in wanted:
        stdout, stderr = io.StringIO(), io.StringIO()
        code = 0
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                jitscope_main(COMMANDS[name])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
        out[name] = {"code": code, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()}
    json.dump(out, real_stdout)


if __name__ == "__main__":
    main()
