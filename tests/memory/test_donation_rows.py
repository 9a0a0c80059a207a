"""The donation table: a few candidates one by one, a model's parameters grouped by argument."""

from __future__ import annotations

from jitscope.model.memory import DonationCandidate
from jitscope.report.views.memory import DONATIONS_LISTED, _donation_rows


def _candidate(name: str, parameter: int, size: int = 1024) -> DonationCandidate:
    return DonationCandidate(name, parameter, "f32[256]", size, f"output {parameter + 1}")


def test_few_candidates_are_listed_one_by_one() -> None:
    rows = _donation_rows((_candidate("x", 0), _candidate("params['w']", 1, 4096)))
    assert rows == (("x (#0)", "f32[256]", "output 1", "1 KiB"), ("params['w'] (#1)", "f32[256]", "output 2", "4 KiB"))


def test_a_models_parameters_are_grouped_by_argument_with_a_total() -> None:
    model = [_candidate(f"model.blocks[{i}].kernel.value", i) for i in range(DONATIONS_LISTED)]
    optimizer = [_candidate(f"optimizer.opt_state[0].mu.blocks[{i}]", DONATIONS_LISTED + i, 2048) for i in range(3)]
    rows = _donation_rows((*model, *optimizer, _candidate("batch", 20)))
    assert rows == (
        (f"model (#0-#{DONATIONS_LISTED - 1})", f"{DONATIONS_LISTED} arrays", f"{DONATIONS_LISTED} outputs",
         f"{DONATIONS_LISTED} KiB"),
        (f"optimizer (#{DONATIONS_LISTED}-#{DONATIONS_LISTED + 2})", "3 arrays", "3 outputs", "6 KiB"),
        ("batch (#20)", "f32[256]", "output 21", "1 KiB"),
        ("total", f"{DONATIONS_LISTED + 4} arrays", "", f"{DONATIONS_LISTED + 7} KiB"),
    )
