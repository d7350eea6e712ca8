"""Model prices and the one cost formula (shared/PROVIDERS.md):

    cost = (input - cached - written) * in_rate + cached * read_rate + written * write_rate + output * out_rate

Rates are USD per million tokens, from pricing.toml next to this file, overridable with `--prices FILE`.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

from harness.errors import HarnessError
from harness.models.base import EMULATOR, Usage
from harness.input_file import SETTINGS_BYTES
from harness.validate import parse_toml, read_text

PER_MILLION = 1_000_000
_DATE_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


@dataclass(frozen=True)
class LongContextTier:
    """Multipliers that apply to the whole request when its prompt exceeds `above` tokens."""

    above: int
    input: float = 1.0
    cache: float = 1.0  # cache reads and writes
    output: float = 1.0


@dataclass(frozen=True)
class ModelPrice:
    model: str
    provider: str
    input: float
    cache_read: float
    output: float
    cache_write: float | None = None  # None: writes are not charged extra (input rate)
    cache_write_long: float | None = None
    window: int | None = None
    max_output: int | None = None
    long_context: LongContextTier | None = None
    source: str = ""
    note: str = ""

    @property
    def write_rate(self) -> float:
        return self.input if self.cache_write is None else self.cache_write


PriceTable = Mapping[str, ModelPrice]
_FIELDS = {f.name for f in fields(ModelPrice)} - {"model"}
_REQUIRED = ("input", "cache_read", "output")


def load_prices(path: str | Path | None = None) -> dict[str, ModelPrice]:
    """The shipped table, with the rows of `path` merged over it field by field (new models added)."""
    table = dict(_default_prices())
    if path is None:
        return table
    file = Path(path)
    text = read_text(file, "the prices file", "cannot read prices file", SETTINGS_BYTES)
    document = parse_toml(text, str(file), "the prices file")
    for name, row in _rows(document, str(file)).items():
        table[name] = _merge(table.get(name), name, row, str(file))
    return table


@lru_cache(maxsize=1)
def _default_prices() -> dict[str, ModelPrice]:
    text = resources.files("harness.models").joinpath("pricing.toml").read_text(encoding="utf-8")
    return {name: _merge(None, name, row, "pricing.toml") for name, row in _rows(tomllib.loads(text), "pricing.toml").items()}


def _rows(document: dict[str, Any], where: str) -> dict[str, dict[str, Any]]:
    models = document.get("models")
    if not isinstance(models, dict):
        raise HarnessError(f'{where}: expected [models."NAME"] tables with input, cache_read and output rates')
    return models


def _merge(base: ModelPrice | None, name: str, row: Any, where: str) -> ModelPrice:
    if not isinstance(row, dict):
        raise HarnessError(f'{where}: models."{name}" must be a table')
    unknown = set(row) - _FIELDS
    if unknown:
        raise HarnessError(f'{where}: models."{name}": unknown field {sorted(unknown)[0]!r}; '
                           f"known: {', '.join(sorted(_FIELDS))}")
    values = dict(row)
    if "long_context" in values:
        values["long_context"] = _tier(values["long_context"], f'{where}: models."{name}".long_context')
    for key in _RATES:
        if key in values:
            _rate(values[key], f'{where}: models."{name}".{key}')
    for key in ("window", "max_output"):
        value = values.get(key)
        if key in values and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise HarnessError(f'{where}: models."{name}".{key} must be a whole number of tokens, 1 or more')
    for key in ("provider", "source", "note"):
        if key in values and not isinstance(values[key], str):
            raise HarnessError(f'{where}: models."{name}".{key} must be a string')
    if base is not None:
        return replace(base, **values)
    missing = [key for key in _REQUIRED if key not in values]
    if missing:
        raise HarnessError(f'{where}: models."{name}" is missing {", ".join(missing)}')
    values.setdefault("provider", name.split(":")[0] if ":" in name else "unknown")
    return ModelPrice(model=name, **values)


_RATES = ("input", "cache_read", "output", "cache_write", "cache_write_long")
MAX_RATE = 10_000.0  # USD per million tokens: far above any price list, below a typo of a few zeros


def _rate(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_RATE:
        raise HarnessError(f"{where} must be a number from 0 to {MAX_RATE:g} (USD per million tokens), not {value!r}")
    return value  # NaN fails the range test above


def _tier(value: Any, where: str) -> LongContextTier:
    if not isinstance(value, dict) or set(value) - {"above", "input", "cache", "output"} or "above" not in value:
        raise HarnessError(f"{where} must be a table with above and the input, cache, output multipliers")
    above = value["above"]
    if isinstance(above, bool) or not isinstance(above, int) or above < 1:
        raise HarnessError(f"{where}.above must be a whole number of tokens, 1 or more")
    for key in ("input", "cache", "output"):
        if key in value:
            multiplier = value[key]
            if isinstance(multiplier, bool) or not isinstance(multiplier, (int, float)) or not 0 <= multiplier <= 100:
                raise HarnessError(f"{where}.{key} must be a multiplier from 0 to 100, not {multiplier!r}")
    return LongContextTier(**value)


def resolve(model: str, prices: PriceTable) -> ModelPrice:
    """The price row for a model name: accepts a provider prefix (`openai:gpt-5`), a base suffix
    (`@emulator`), date suffixes (`-20251001`, `-2024-08-06`, `-latest`) and Claude dotted versions."""
    name = model.strip().split("@", 1)[0]
    if name != "builtin" and ":" in name:
        name = name.split(":", 1)[1]
    candidates = [name, _DATE_SUFFIX.sub("", name)]
    if name.startswith("claude"):
        candidates += [c.replace(".", "-") for c in candidates]
    for candidate in candidates:
        if candidate in prices:
            return prices[candidate]
    if model.strip().endswith(f"@{EMULATOR}"):  # the emulator charges nothing: a model it serves needs no row
        return ModelPrice(name, model.split(":", 1)[0], 0.0, 0.0, 0.0,
                          note="served by the emulator, which is free (no price row)")
    raise HarnessError(
        f"no price for model {model!r}: pass --prices FILE with a row such as "
        f'[models."{name}"] input = 1.0, cache_read = 0.1, cache_write = 1.25, output = 5.0 '
        "(USD per million tokens, one key per line)")


def cost(usage: Usage, model: str, prices: PriceTable | None = None, *, long_ttl: bool = False) -> float:
    """USD for one response's usage. Writes bill at the default TTL rate (Anthropic 5m) unless long_ttl."""
    row = resolve(model, prices if prices is not None else _default_prices())
    tier = row.long_context if row.long_context and usage.input_tokens > row.long_context.above else None
    in_x, cache_x, out_x = (tier.input, tier.cache, tier.output) if tier else (1.0, 1.0, 1.0)
    write_rate = row.cache_write_long if long_ttl and row.cache_write_long is not None else row.write_rate
    if row.cache_write is None:  # writes not charged extra: they scale with the input rate
        write_rate, write_x = row.input, in_x
    else:
        write_x = cache_x
    dollars = (usage.uncached_input_tokens * row.input * in_x
               + usage.cached_input_tokens * row.cache_read * cache_x
               + usage.cache_write_tokens * write_rate * write_x
               + usage.output_tokens * row.output * out_x)
    return dollars / PER_MILLION


def bare(model: str) -> str:
    """The model name as the provider's API takes it (no provider prefix, no base URL)."""
    name = model.strip().split("@", 1)[0]
    return name.split(":", 1)[1] if ":" in name else name
