#!/usr/bin/env node
// Reference adapter for the external policy protocol (protocol.schema.json, version 1): the policy under
// test (POLICY.md) in JavaScript. Compact when the context estimate reaches window - reserve_tokens, on
// every send; keep the last tail_turns turns, dropping the oldest while over tail_cap_tokens, and fall back
// to the last turn's most recent step. It keeps only roles and token counts; the harness does the rest.
"use strict";

const readline = require("readline");

const roles = [];   // role of each message seen so far, by index
const tokens = [];  // its estimated tokens
let liveStart = 0;  // first message after the summary in effect
let config = null;

function reply(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

function active() {
  return config.enabled && config.mode !== "off";
}

function span(start, end) {
  let sum = 0;
  for (let i = start; i < end; i++) sum += tokens[i];
  return sum;
}

// The last `limit` turns of the live context, oldest first. A turn opens at a user message; the oldest
// live turn may have lost its user message to an earlier compaction, so it starts at liveStart.
function recentTurns(end, limit) {
  const turns = [];
  let turnEnd = end;
  let steps = [];
  for (let i = end - 1; i >= liveStart && turns.length < limit; i--) {
    if (roles[i] === "assistant") steps.push(i);
    if (roles[i] === "user" || i === liveStart) {
      turns.push({ start: i, end: turnEnd, steps: steps.reverse() });
      turnEnd = i;
      steps = [];
    }
  }
  return turns.reverse();
}

function turnFirstTail(end) {
  const turns = recentTurns(end, config.tail_turns);
  if (turns.length === 0) {
    return { tail_start: end, turns_kept: 0, steps_kept: 0, truncated_to_step: false };
  }
  let size = span(turns[0].start, end);
  while (turns.length > 1 && size > config.tail_cap_tokens) {
    size -= span(turns[0].start, turns[0].end);
    turns.shift();
  }
  const last = turns[0];
  if (turns.length === 1 && size > config.tail_cap_tokens && last.steps.length > 0) {
    // One turn still over the cap: keep its most recent step whole; its user message goes to the summary.
    const step = last.steps[last.steps.length - 1];
    return { tail_start: step, turns_kept: 1, steps_kept: 1, truncated_to_step: step > last.start };
  }
  const steps = turns.reduce((n, t) => n + t.steps.length, 0);
  return { tail_start: turns[0].start, turns_kept: turns.length, steps_kept: steps, truncated_to_step: false };
}

function onSend(message) {
  for (const [role, count] of message.new) {
    roles.push(role);
    tokens.push(count);
  }
  const trigger = config.context_window - config.reserve_tokens;
  if (!active() || message.context_tokens < trigger) return { action: "keep" };
  return { action: "compact", ...turnFirstTail(message.index) };
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  if (!line.trim()) return;
  const message = JSON.parse(line);
  switch (message.type) {
    case "start":
      config = message.config;
      reply({ type: "ready", name: "default (reference adapter, Node.js)" });
      break;
    case "send":
      reply(onSend(message));
      break;
    case "fold":
      liveStart = message.tail_start;
      reply({ type: "folded" });
      break;
    case "end":
      lines.close();
      break;
    default:
      process.stderr.write(`unknown message type ${JSON.stringify(message.type)}\n`);
      process.exit(2);
  }
});
