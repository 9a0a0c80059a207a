"""The skew rules of jitscope merge for bench reports (pure): flagged only beyond the processes' own spread."""

from __future__ import annotations

from jitscope.hosts.bench import cached_skew, compile_skew, per_process_path
from jitscope.model.hosts import BenchFigures


def figures(process: int, median: float, q1: float, q3: float, compile_s: float | None = 0.1,
            spread: float | None = None) -> BenchFigures:
    return BenchFigures(process=process, cached_median_s=median, cached_q1_s=q1, cached_q3_s=q3, rounds=20,
                        cold_s=0.2, compile_s=compile_s, compile_spread=spread)


def test_cached_skew_within_the_spread_is_not_flagged() -> None:
    skew = cached_skew([figures(0, 1.0e-3, 0.8e-3, 1.2e-3), figures(1, 1.3e-3, 1.0e-3, 1.4e-3)])
    assert skew is not None and (skew.ratio, skew.slowest, skew.fastest) == (1.3, 1, 0)
    assert skew.spread == 1.5 and not skew.flagged


def test_cached_skew_beyond_the_spread_is_flagged() -> None:
    skew = cached_skew([figures(0, 1.0e-3, 0.95e-3, 1.05e-3), figures(1, 2.0e-3, 1.9e-3, 2.1e-3)])
    assert skew is not None and skew.slowest == 1 and skew.ratio == 2.0 and skew.flagged


def test_compile_skew_uses_the_cold_runs_spread_when_known() -> None:
    known = compile_skew([figures(0, 1e-3, 1e-3, 1e-3, 0.10, 1.1), figures(1, 1e-3, 1e-3, 1e-3, 0.13, 1.05)])
    assert known is not None and known.spread == 1.1 and known.flagged  # 1.3x beyond 1.1x
    unknown = compile_skew([figures(0, 1e-3, 1e-3, 1e-3, 0.10), figures(1, 1e-3, 1e-3, 1e-3, 0.30)])
    assert unknown is not None and unknown.spread is None and not unknown.flagged  # 3x but only 0.2 s longer
    slow = compile_skew([figures(0, 1e-3, 1e-3, 1e-3, 0.2), figures(1, 1e-3, 1e-3, 1e-3, 0.6)])
    assert slow is not None and slow.flagged and slow.slowest == 1


def test_one_process_has_no_skew_and_saves_go_per_process(tmp_path) -> None:
    assert cached_skew([figures(0, 1e-3, 1e-3, 1e-3)]) is None
    assert per_process_path(tmp_path / "bench.json", 1) == tmp_path / "bench.p1.json"
