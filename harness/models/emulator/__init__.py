"""A wire-format emulator of OpenAI Chat Completions and Responses, Anthropic Messages and the Gemini API,
backed by the builtin model or another responder (reply.py), with tool calls on every wire.

Its prompt-cache simulator (cache.py) applies each provider's documented rules (shared/PROVIDERS.md), so the
usage it reports is what that provider would bill for the same request sequence; figures from it are
`modelled`. Use it in-process as an httpx2 transport (`EmulatorTransport`) or on loopback with `serve(port)`.
core: request handling; reply: what a responder (the model behind the wires) answers; chat, messages,
responses(_stream), gemini: the wires; wire: what they share; cache: the cache simulators; faults: fault
injection; serve: the transport and the loopback server.
"""

from harness.models.emulator.cache import (TTL_SECONDS, AnthropicBreakpointCache, AnthropicCacheResult, CacheBlock,
                                           Clock, OpenAIPrefixCache)
from harness.models.emulator.core import Emulator
from harness.models.emulator.faults import FAULT_KINDS, EmulatorError, EmulatorTimeout, Fault
from harness.models.emulator.reply import Exchange, Reply, Responder
from harness.models.emulator.serve import EmulatorServer, EmulatorTransport, serve
from harness.models.emulator.chat import openai_prompt_tokens
from harness.models.emulator.messages import anthropic_blocks

__all__ = ["FAULT_KINDS", "TTL_SECONDS", "AnthropicBreakpointCache", "AnthropicCacheResult", "CacheBlock", "Clock",
           "Emulator", "EmulatorError", "EmulatorServer", "EmulatorTimeout", "EmulatorTransport", "Exchange", "Fault",
           "OpenAIPrefixCache", "Reply", "Responder", "anthropic_blocks", "openai_prompt_tokens", "serve"]
