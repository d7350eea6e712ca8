"""The cost study's cache simulation over one long case: requests read through per-message digests (each
message serialised, hashed and counted once) against the comparator that re-serialises every request's whole
payload, as the study did before (issue 16, item 6). Both price every compaction alike (checked)."""

from functools import lru_cache

import pytest

from harness.cases import discover
from harness.models.anthropic import message_params
from harness.models.emulator import anthropic_blocks, openai_prompt_tokens
from harness.models.openai import chat_params
from harness.models.pricing import load_prices
from harness.studies import costs
from harness.studies.cache_world import CacheWorld, Sent
from harness.studies.digests import Digests

CASE = "long-auth-refactor"
MODELS = ("anthropic:claude-sonnet-4-6", "openai:gpt-5")


@lru_cache(maxsize=None)
def prepared():
    case = discover("cases", [CASE])[0]
    return case, costs.folds_of(case)


class ReserialisingWorld(CacheWorld):
    """The comparator: every request rebuilt as its wire payload and read back block by block."""

    def send(self, request, at=None, lead=()):
        if at is not None:
            self.now = max(self.now, at)
        self.last_send = self.now
        memo = self.digests.memo
        if self.provider == "anthropic":
            result = self.anthropic.process(self.namespace, [*lead, *anthropic_blocks(message_params(request), memo)])
            return Sent(result.total_tokens, result.read_tokens, result.write_tokens)
        tokens = openai_prompt_tokens(chat_params(request), memo)
        return Sent(len(tokens), self.openai.lookup_and_store(self.namespace, tokens), 0)


PRICED: dict[type, list] = {}  # each world's rows as this process last priced them


def price_all(world_class):
    case, folds = prepared()
    PRICED[world_class] = [row.to_json() for model in MODELS
                           for row in costs.price_session(case, folds, model, [], load_prices(), digests=Digests(),
                                                          world_class=world_class)]
    return PRICED[world_class]


@pytest.mark.parametrize("world", [CacheWorld, ReserialisingWorld], ids=["digests", "reserialised"])
def test_cost_cache_simulation(benchmark, world):
    case, folds = prepared()
    benchmark.group = "cost study cache simulation, long-auth-refactor, both providers"
    benchmark.extra_info["compactions"] = len(folds)
    benchmark.extra_info["messages"] = len(case.session.messages)
    rows = benchmark.pedantic(price_all, (world,), rounds=3, iterations=1, warmup_rounds=0)
    other = CacheWorld if world is ReserialisingWorld else ReserialisingWorld
    assert rows == (PRICED[other] if other in PRICED else price_all(other))  # the other row's run, if it ran here
