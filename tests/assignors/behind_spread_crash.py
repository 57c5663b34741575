"""The example ha assignor, except that it crashes when the leader's view reports two behind
copies at different lags (a reader that assumed every behind lag is the same number): its
failure shows only on the views boundary lags spread apart (tests/test_lag_readings.py)."""

from __future__ import annotations

from examples.ha_assignor import assign as example


def assign(request: dict) -> dict:
    limit = request.get("config", {}).get("acceptable_recovery_lag", 10000)
    behind = {lag for m in request["members"] for lag in (m.get("lags") or {}).values() if lag > limit}
    if len(behind) > 1:
        raise RuntimeError(f"cannot read these lags: {sorted(behind)}")
    return example(request)
