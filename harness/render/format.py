"""The one copy of number formatting: percents, dollars, rates with Wilson intervals, dashes for None."""

from __future__ import annotations

from typing import Any


def dash(value: Any) -> str:
    """The value as text, a dash when it is missing."""
    return "-" if value is None else str(value)


def fixed(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def number(value: float | None) -> str:
    """Shortest general form (0.4445, 1007.83), a dash when missing."""
    return "-" if value is None else f"{value:g}"


def percent(share: float | None) -> str:
    """A share of 1 as a percent with one decimal: 0.762 -> 76.2%."""
    return "-" if share is None else f"{100 * share:.1f}%"


def rate_percent(rate: dict[str, Any] | None) -> str:
    """A rate record's share as a percent, without its interval."""
    return "-" if not rate or rate.get("rate") is None else percent(rate["rate"])


def wilson_rate(rate: dict[str, Any] | None) -> str:
    """A rate record as `76.2% [55-89] (16/21)`: share, Wilson 95% interval, passed of total."""
    if not rate or rate.get("rate") is None:
        return "-"
    low, high = rate["wilson95"]
    return f"{100 * rate['rate']:.1f}% [{100 * low:.0f}-{100 * high:.0f}] ({rate['passed']}/{rate['total']})"


def dollars(value: float | None, digits: int = 5) -> str:
    """$0.01825 (five decimals: summarizer calls cost fractions of a cent), a dash when missing."""
    return "-" if value is None else f"${value:.{digits}f}"


def sourced_dollars(value: float | None, source: str | None) -> str:
    """Dollars with where the figure comes from: `$0.01825 (live)`."""
    return "-" if value is None else f"{dollars(value)} ({source or '-'})"


def interval(low_high: list[float] | None) -> str:
    """A 95% interval of a share as `[55-89]`, a dash inside when it is missing (interim writes)."""
    if not low_high:
        return "[-]"
    return f"[{100 * low_high[0]:.0f}-{100 * low_high[1]:.0f}]"


def headline_rate(rate: dict[str, Any] | None) -> str:
    """A headline rate as `57.1% [25-84] [clustered 40-80] (4/7)`: share, Wilson and case-clustered 95%."""
    if not rate or rate.get("rate") is None:
        return "-"
    return (f"{100 * rate['rate']:.1f}% {interval(rate['wilson95'])} [clustered "
            f"{interval(rate.get('cluster95'))[1:-1]}] ({rate['passed']}/{rate['total']})")
