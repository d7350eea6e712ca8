"""Building blocks for tool outputs: source files, test logs, compiler errors, greps, trees, logs, git.

Everything takes a `random.Random` so output is deterministic from the case seed. Sizes are targets in
characters; generators add realistic units (functions, test lines, log lines) until the target is met.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from worlds import World

FIELDS = ("id", "tenant_id", "created_at", "updated_at", "amount", "currency", "status", "external_ref",
          "customer_id", "due_date", "version", "owner_id", "region", "priority", "attempts", "expires_at",
          "checksum", "source", "label", "quantity", "deleted_at", "parent_id", "notes", "revision")
VERBS = ("load", "parse", "validate", "resolve", "build", "apply", "compute", "merge", "normalize", "fetch",
         "emit", "reconcile", "render", "flush", "schedule", "retry", "split", "collect", "prune", "encode",
         "decode", "refresh", "claim", "release", "lookup", "sync", "index", "expire")
ADJ = ("pending", "stale", "active", "batched", "cached", "expired", "partial", "primary", "draft", "settled")


def pascal(words: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in words.replace("-", "_").split("_") if w)


def camel(words: str) -> str:
    p = pascal(words)
    return p[:1].lower() + p[1:]


def module_stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.split(".")[0]


def numbered(text: str, start: int = 1) -> str:
    lines = text.split("\n")
    width = len(str(start + len(lines)))
    return "\n".join(f"{str(start + i).rjust(width)}\t{line}" for i, line in enumerate(lines))


# ------------------------------------------------------------------------------------------------
# source files


def _fields(rng: random.Random, k: int = 4) -> list[str]:
    return rng.sample(FIELDS, k)


def _py_unit(rng: random.Random, world: World) -> str:
    noun = rng.choice(world.nouns)
    N = pascal(noun)
    verb = rng.choice(VERBS)
    f = _fields(rng, 4)
    adj = rng.choice(ADJ)
    k = rng.randrange(9)
    if k == 0:
        return (f'def {verb}_{noun}(payload: Mapping[str, Any]) -> {N}:\n'
                f'    """{verb.capitalize()} an incoming {noun.replace("_", " ")} payload."""\n'
                f'    missing = [key for key in ({", ".join(repr(x) for x in f[:3])}) if key not in payload]\n'
                f'    if missing:\n'
                f'        raise ValidationError(f"{noun} payload missing fields: {{\', \'.join(missing)}}")\n'
                f'    return {N}(\n' + "".join(f'        {x}=payload["{x}"],\n' for x in f[:3]) +
                f'        {f[3]}=payload.get("{f[3]}"),\n    )\n')
    if k == 1:
        return (f'def total_{adj}_{noun}s(items: Iterable[{N}]) -> Decimal:\n'
                f'    total = Decimal("0")\n'
                f'    for item in items:\n'
                f'        if item.status is {N}Status.{rng.choice(["VOID", "DRAFT", "CANCELLED"])}:\n'
                f'            continue\n'
                f'        total += item.{f[0]}.quantize(CENT, rounding=ROUND_HALF_EVEN)\n'
                f'    return total\n')
    if k == 2:
        n = rng.randint(2, 6)
        return (f'async def {verb}_{noun}_with_retry(client: httpx.AsyncClient, {noun}_id: str) -> dict[str, Any]:\n'
                f'    delay = {rng.choice(["0.2", "0.5", "1.0"])}\n'
                f'    for attempt in range(1, {n} + 1):\n'
                f'        try:\n'
                f'            resp = await client.get(f"/{noun.replace("_", "-")}s/{{{noun}_id}}", timeout={rng.randint(2, 30)})\n'
                f'            resp.raise_for_status()\n'
                f'            return resp.json()\n'
                f'        except (httpx.TransportError, httpx.HTTPStatusError) as exc:\n'
                f'            logger.warning("{verb} %s failed (attempt %d/{n}): %s", {noun}_id, attempt, exc)\n'
                f'            await asyncio.sleep(delay)\n'
                f'            delay *= 2\n'
                f'    raise {N}Unavailable({noun}_id)\n')
    if k == 3:
        body = "".join(f"    {x}: {rng.choice(['str', 'int', 'Decimal', 'datetime', 'str | None', 'UUID'])}"
                       f"{' = None' if i == 3 else ''}\n" for i, x in enumerate(f))
        return (f'@dataclass(frozen=True, slots=True)\n'
                f'class {pascal(adj)}{N}:\n'
                f'    """A {adj} {noun.replace("_", " ")} as stored in the {rng.choice(["outbox", "ledger", "cache", "queue"])}."""\n\n'
                + body + '\n'
                f'    def as_dict(self) -> dict[str, Any]:\n'
                f'        return {{k: getattr(self, k) for k in self.__slots__}}\n')
    if k == 4:
        return (f'def {verb}_{noun}s_for_tenant(session: Session, tenant_id: UUID, *, limit: int = {rng.choice([50, 100, 200, 500])}) -> list[{N}]:\n'
                f'    stmt = (\n'
                f'        select({N})\n'
                f'        .where({N}.tenant_id == tenant_id)\n'
                f'        .where({N}.{f[0]}.is_not(None))\n'
                f'        .order_by({N}.{f[1]}.desc())\n'
                f'        .limit(limit)\n'
                f'    )\n'
                f'    rows = session.execute(stmt).scalars().all()\n'
                f'    logger.debug("{verb} %d {noun}s for tenant %s", len(rows), tenant_id)\n'
                f'    return list(rows)\n')
    if k == 5:
        return (f'class {N}{pascal(rng.choice(["cache", "registry", "index", "buffer"]))}:\n'
                f'    def __init__(self, ttl_seconds: int = {rng.choice([30, 60, 300, 900])}) -> None:\n'
                f'        self._ttl = ttl_seconds\n'
                f'        self._items: dict[str, tuple[float, {N}]] = {{}}\n'
                f'        self._lock = threading.Lock()\n\n'
                f'    def get(self, key: str) -> {N} | None:\n'
                f'        with self._lock:\n'
                f'            entry = self._items.get(key)\n'
                f'            if entry is None or entry[0] < time.monotonic():\n'
                f'                self._items.pop(key, None)\n'
                f'                return None\n'
                f'            return entry[1]\n\n'
                f'    def put(self, key: str, value: {N}) -> None:\n'
                f'        with self._lock:\n'
                f'            self._items[key] = (time.monotonic() + self._ttl, value)\n')
    if k == 6:
        return (f'def {verb}_{noun}_event(event: Mapping[str, Any]) -> None:\n'
                f'    match event.get("type"):\n'
                f'        case "{noun}.created":\n'
                f'            _on_created(event["data"])\n'
                f'        case "{noun}.{rng.choice(["updated", "settled", "voided", "expired"])}":\n'
                f'            _on_changed(event["data"], reason=event.get("reason", "unknown"))\n'
                f'        case None:\n'
                f'            raise ValueError("event without a type")\n'
                f'        case other:\n'
                f'            logger.info("ignoring %s event %s", other, event.get("id"))\n')
    if k == 7:
        return (f'def {verb}_window(start: datetime, end: datetime, step: timedelta = timedelta(hours={rng.choice([1, 6, 24])})) -> Iterator[tuple[datetime, datetime]]:\n'
                f'    if end <= start:\n'
                f'        raise ValueError(f"empty window: {{start.isoformat()}} .. {{end.isoformat()}}")\n'
                f'    cursor = start\n'
                f'    while cursor < end:\n'
                f'        upper = min(cursor + step, end)\n'
                f'        yield cursor, upper\n'
                f'        cursor = upper\n')
    return (f'def {verb}_{noun}_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:\n'
            f'    seen: set[tuple[Any, ...]] = set()\n'
            f'    out: list[dict[str, Any]] = []\n'
            f'    for row in rows:\n'
            f'        key = (row["{f[0]}"], row.get("{f[1]}"))\n'
            f'        if key in seen:\n'
            f'            continue\n'
            f'        seen.add(key)\n'
            f'        out.append({{**row, "{f[2]}": _coerce(row.get("{f[2]}"))}})\n'
            f'    return out\n')


def _ts_unit(rng: random.Random, world: World) -> str:
    noun = rng.choice(world.nouns)
    N = pascal(noun)
    verb = rng.choice(VERBS)
    f = [camel(x) for x in _fields(rng, 4)]
    k = rng.randrange(8)
    if k == 0:
        types = ["string", "number", "Date", "string | null", "boolean"]
        return (f'export interface {N}{pascal(rng.choice(ADJ))} {{\n'
                + "".join(f'  {x}{"?" if i == 3 else ""}: {rng.choice(types)};\n' for i, x in enumerate(f)) + '}\n')
    if k == 1:
        return (f'export async function {verb}{N}(id: string, opts: {{ signal?: AbortSignal }} = {{}}): Promise<{N}> {{\n'
                f'  const cached = await cache.get<{N}>(`{noun}:${{id}}`);\n'
                f'  if (cached) return cached;\n'
                f'  const row = await db.{noun}.findUnique({{ where: {{ id }} }});\n'
                f'  if (!row) {{\n'
                f'    throw new NotFoundError(`{noun} ${{id}} not found`);\n'
                f'  }}\n'
                f'  await cache.set(`{noun}:${{id}}`, row, {{ ttl: {rng.choice([30, 60, 120, 600])} }});\n'
                f'  return row;\n'
                f'}}\n')
    if k == 2:
        return (f'router.{rng.choice(["get", "post", "patch", "delete"])}("/{noun}s/:id{rng.choice(["", "/items", "/status", "/history"])}", requireSession, async (req, res, next) => {{\n'
                f'  try {{\n'
                f'    const result = await {camel(verb + "_" + noun)}(req.params.id, {{ tenantId: req.session.tenantId }});\n'
                f'    res.status({rng.choice([200, 201, 202])}).json(result);\n'
                f'  }} catch (err) {{\n'
                f'    next(err);\n'
                f'  }}\n'
                f'}});\n')
    if k == 3:
        return (f'export class {N}{pascal(rng.choice(["queue", "store", "registry", "tracker"]))} {{\n'
                f'  private readonly items = new Map<string, {N}>();\n'
                f'  constructor(private readonly limit = {rng.choice([64, 128, 256, 1024])}) {{}}\n\n'
                f'  add(item: {N}): void {{\n'
                f'    if (this.items.size >= this.limit) {{\n'
                f'      const oldest = this.items.keys().next().value;\n'
                f'      if (oldest !== undefined) this.items.delete(oldest);\n'
                f'    }}\n'
                f'    this.items.set(item.{f[0]}, item);\n'
                f'  }}\n\n'
                f'  {verb}(predicate: (item: {N}) => boolean): {N}[] {{\n'
                f'    return [...this.items.values()].filter(predicate);\n'
                f'  }}\n'
                f'}}\n')
    if k == 4:
        return (f'export function {verb}{N}s(items: readonly {N}[]): Record<string, {N}[]> {{\n'
                f'  return items.reduce<Record<string, {N}[]>>((acc, item) => {{\n'
                f'    const key = String(item.{f[1]} ?? "unknown");\n'
                f'    (acc[key] ??= []).push(item);\n'
                f'    return acc;\n'
                f'  }}, {{}});\n'
                f'}}\n')
    if k == 5:
        return (f'const {camel(noun)}Schema = z.object({{\n'
                + "".join(f'  {x}: z.{rng.choice(["string()", "number().int().nonnegative()", "string().uuid()", "coerce.date()", "boolean().default(false)"])}{".optional()" if i == 3 else ""},\n' for i, x in enumerate(f))
                + f'}});\nexport type {N}Input = z.infer<typeof {camel(noun)}Schema>;\n')
    if k == 6:
        return (f'export function use{N}{pascal(rng.choice(ADJ))}(id: string) {{\n'
                f'  const [state, setState] = useState<{N} | null>(null);\n'
                f'  useEffect(() => {{\n'
                f'    let cancelled = false;\n'
                f'    {verb}{N}(id).then((value) => {{ if (!cancelled) setState(value); }});\n'
                f'    return () => {{ cancelled = true; }};\n'
                f'  }}, [id]);\n'
                f'  return state;\n'
                f'}}\n')
    return (f'export const {camel(verb + "_" + noun)}Handler: Handler = async (event) => {{\n'
            f'  logger.info({{ event: "{noun}.{verb}", id: event.id }}, "handling {noun}");\n'
            f'  switch (event.type) {{\n'
            f'    case "{noun}.created":\n'
            f'      return on{N}Created(event.payload);\n'
            f'    case "{noun}.{rng.choice(["updated", "cancelled", "expired"])}":\n'
            f'      return on{N}Changed(event.payload);\n'
            f'    default:\n'
            f'      logger.warn({{ type: event.type }}, "unhandled event");\n'
            f'  }}\n'
            f'}};\n')


def _go_unit(rng: random.Random, world: World) -> str:
    noun = rng.choice(world.nouns)
    N = pascal(noun)
    verb = rng.choice(VERBS)
    f = [pascal(x) for x in _fields(rng, 4)]
    k = rng.randrange(8)
    if k == 0:
        types = ["string", "int64", "time.Time", "*string", "bool", "[]string", "time.Duration"]
        return (f'// {N}{pascal(rng.choice(ADJ))} is the {rng.choice(ADJ)} form of a {noun}.\n'
                f'type {N}{pascal(rng.choice(ADJ))} struct {{\n'
                + "".join(f'\t{x} {rng.choice(types)} `json:"{camel(x.lower()) if len(x) < 4 else x[0].lower() + x[1:]},omitempty"`\n' for x in f) + '}\n')
    if k == 1:
        return (f'func (s *Store) {pascal(verb)}{N}(ctx context.Context, id string) (*{N}, error) {{\n'
                f'\trow := s.db.QueryRowContext(ctx, `SELECT id, {", ".join(x.lower() for x in f[:3])} FROM {noun}s WHERE id = $1`, id)\n'
                f'\tvar out {N}\n'
                f'\tif err := row.Scan(&out.ID, &out.{f[0]}, &out.{f[1]}, &out.{f[2]}); err != nil {{\n'
                f'\t\tif errors.Is(err, sql.ErrNoRows) {{\n'
                f'\t\t\treturn nil, fmt.Errorf("{noun} %s: %w", id, ErrNotFound)\n'
                f'\t\t}}\n'
                f'\t\treturn nil, fmt.Errorf("{verb} {noun} %s: %w", id, err)\n'
                f'\t}}\n'
                f'\treturn &out, nil\n'
                f'}}\n')
    if k == 2:
        return (f'func {verb}{N}s(ctx context.Context, in <-chan {N}, workers int) <-chan error {{\n'
                f'\terrs := make(chan error, workers)\n'
                f'\tvar wg sync.WaitGroup\n'
                f'\tfor i := 0; i < workers; i++ {{\n'
                f'\t\twg.Add(1)\n'
                f'\t\tgo func() {{\n'
                f'\t\t\tdefer wg.Done()\n'
                f'\t\t\tfor item := range in {{\n'
                f'\t\t\t\tif err := handle{N}(ctx, item); err != nil {{\n'
                f'\t\t\t\t\terrs <- err\n'
                f'\t\t\t\t}}\n'
                f'\t\t\t}}\n'
                f'\t\t}}()\n'
                f'\t}}\n'
                f'\tgo func() {{ wg.Wait(); close(errs) }}()\n'
                f'\treturn errs\n'
                f'}}\n')
    if k == 3:
        return (f'func (h *Handler) {pascal(verb)}{N}(w http.ResponseWriter, r *http.Request) {{\n'
                f'\tid := chi.URLParam(r, "{camel(noun)}ID")\n'
                f'\tctx, cancel := context.WithTimeout(r.Context(), {rng.choice([2, 5, 10, 30])}*time.Second)\n'
                f'\tdefer cancel()\n'
                f'\titem, err := h.store.{pascal(rng.choice(VERBS))}{N}(ctx, id)\n'
                f'\tif err != nil {{\n'
                f'\t\th.log.Error("{verb} {noun}", "id", id, "err", err)\n'
                f'\t\twriteError(w, err)\n'
                f'\t\treturn\n'
                f'\t}}\n'
                f'\twriteJSON(w, http.Status{rng.choice(["OK", "Accepted", "Created"])}, item)\n'
                f'}}\n')
    if k == 4:
        return (f'func next{N}Backoff(attempt int, base, max time.Duration) time.Duration {{\n'
                f'\tif attempt <= 0 {{\n\t\treturn base\n\t}}\n'
                f'\td := base << uint(attempt)\n'
                f'\tif d <= 0 || d > max {{\n\t\td = max\n\t}}\n'
                f'\tjitter := time.Duration(rand.Int63n(int64(d) / {rng.choice([2, 4, 5, 10])}))\n'
                f'\treturn d - jitter\n'
                f'}}\n')
    if k == 5:
        return (f'var Err{N}{pascal(rng.choice(["expired", "conflict", "locked", "invalid"]))} = errors.New("{noun}: {rng.choice(["expired", "version conflict", "already locked", "invalid state"])}")\n\n'
                f'func (m *{N}Manager) {pascal(verb)}(ctx context.Context, key string) error {{\n'
                f'\tm.mu.Lock()\n'
                f'\tdefer m.mu.Unlock()\n'
                f'\tif _, ok := m.{camel(noun)}s[key]; !ok {{\n'
                f'\t\treturn fmt.Errorf("{verb} %q: %w", key, ErrNotFound)\n'
                f'\t}}\n'
                f'\tdelete(m.{camel(noun)}s, key)\n'
                f'\tm.metrics.{pascal(verb)}Total.Inc()\n'
                f'\treturn nil\n'
                f'}}\n')
    if k == 6:
        return (f'func Test{pascal(verb)}{N}(t *testing.T) {{\n'
                f'\tcases := []struct {{\n\t\tname string\n\t\tin   string\n\t\twant int\n\t}}{{\n'
                + "".join(f'\t\t{{"{rng.choice(ADJ)} {i}", "{noun}-{rng.randint(1, 999)}", {rng.randint(0, 50)}}},\n' for i in range(rng.randint(2, 5)))
                + f'\t}}\n\tfor _, tc := range cases {{\n\t\tt.Run(tc.name, func(t *testing.T) {{\n'
                f'\t\t\tif got := {verb}{N}(tc.in); got != tc.want {{\n'
                f'\t\t\t\tt.Errorf("{verb}{N}(%q) = %d, want %d", tc.in, got, tc.want)\n'
                f'\t\t\t}}\n\t\t}})\n\t}}\n}}\n')
    return (f'func (c *Config) validate{N}() error {{\n'
            f'\tif c.{N}.{f[0]} == "" {{\n'
            f'\t\treturn fmt.Errorf("config: {noun}.{f[0].lower()} is required")\n'
            f'\t}}\n'
            f'\tif c.{N}.Timeout < {rng.choice([100, 250, 500])}*time.Millisecond {{\n'
            f'\t\treturn fmt.Errorf("config: {noun}.timeout %s is too small", c.{N}.Timeout)\n'
            f'\t}}\n'
            f'\treturn nil\n'
            f'}}\n')


def _header(rng: random.Random, world: World, path: str) -> str:
    stem = module_stem(path)
    if world.lang == "py":
        mods = rng.sample(["asyncio", "logging", "threading", "time", "json", "re"], 3)
        others = [m for m in world.modules if m != path and m.endswith(".py")]
        internal = rng.sample(others, min(2, len(others)))
        imps = "".join(f"import {m}\n" for m in sorted(mods))
        imps += ("from collections.abc import Iterable, Iterator, Mapping, Sequence\n"
                 "from dataclasses import dataclass\nfrom datetime import datetime, timedelta\n"
                 "from decimal import ROUND_HALF_EVEN, Decimal\nfrom typing import Any\nfrom uuid import UUID\n\n"
                 "import httpx\nfrom sqlalchemy import select\nfrom sqlalchemy.orm import Session\n\n")
        for m in internal:
            dotted = m.removeprefix("src/").removesuffix(".py").replace("/", ".")
            imps += f"from {dotted} import {pascal(rng.choice(world.nouns))}\n"
        return (f'"""{stem.replace("_", " ").capitalize()}: {rng.choice(["helpers", "the service layer", "models and queries", "the worker entry points", "shared logic"])} for {world.repo}."""\n\n'
                f"from __future__ import annotations\n\n{imps}\nlogger = logging.getLogger(__name__)\n"
                f"CENT = Decimal(\"0.01\")\n\n\n")
    if world.lang == "ts":
        others = [m for m in world.modules if m != path and m.endswith(".ts")]
        imps = ""
        for m in rng.sample(others, min(3, len(others))):
            rel = "../" * (path.count("/") - 1) + m.removeprefix("src/").removesuffix(".ts")
            imps += f'import {{ {camel(rng.choice(VERBS) + "_" + rng.choice(world.nouns))} }} from "{rel if rel.startswith(".") else "./" + rel}";\n'
        return ('import { z } from "zod";\n' + imps + f'\n// {stem}: {rng.choice(["request handling", "domain logic", "helpers", "shared types"])}\n\n')
    pkg = path.rsplit("/", 2)[-2] if path.count("/") >= 1 else "main"
    return (f"// Package {pkg} {rng.choice(['implements', 'provides', 'holds'])} the {pkg} {rng.choice(['logic', 'layer', 'primitives'])} of {world.repo}.\n"
            f"package {pkg}\n\nimport (\n\t\"context\"\n\t\"database/sql\"\n\t\"errors\"\n\t\"fmt\"\n\t\"net/http\"\n"
            f"\t\"sync\"\n\t\"time\"\n\n\t\"github.com/go-chi/chi/v5\"\n\t\"{world.pkg}/internal/{rng.choice(['metrics', 'config', 'store'])}\"\n)\n\n")


def source_file(rng: random.Random, world: World, path: str, target_chars: int, extra: str = "") -> str:
    """A plausible source file of about target_chars characters; `extra` is spliced in the middle."""
    unit = {"py": _py_unit, "ts": _ts_unit, "go": _go_unit}[world.lang]
    if path.endswith((".tsx", ".ts")):
        unit = _ts_unit
    elif path.endswith(".go"):
        unit = _go_unit
    elif path.endswith(".py"):
        unit = _py_unit
    parts = [_header(rng, world, path)]
    size = len(parts[0])
    placed = not extra
    while size < target_chars or not placed:
        if not placed and size >= target_chars / 2:
            parts.append(extra)
            size += len(extra)
            placed = True
            continue
        u = unit(rng, world)
        parts.append(u)
        size += len(u) + 2
    sep = "\n\n" if world.lang == "py" else "\n"
    return sep.join(p.rstrip("\n") + "\n" for p in parts)


# ------------------------------------------------------------------------------------------------
# test runs


def _test_names(rng: random.Random, world: World, n: int) -> list[str]:
    out = []
    for _ in range(n):
        noun = rng.choice(world.nouns)
        verb = rng.choice(VERBS)
        what = rng.choice(["rejects_missing_fields", "handles_empty", "is_idempotent", "rounds_half_even",
                           "respects_tenant", "retries_on_timeout", "orders_by_created_at", "returns_404",
                           "expires_after_ttl", "merges_duplicates", "keeps_order", "skips_deleted",
                           "propagates_cancel", "uses_cache", "validates_currency", "parses_timezone"])
        if world.lang == "py":
            out.append(f"test_{verb}_{noun}_{what}")
        elif world.lang == "go":
            out.append(f"Test{pascal(verb)}{pascal(noun)}_{pascal(what)}")
        else:
            out.append(f"{verb}{pascal(noun)} {what.replace('_', ' ')}")
    return out


def pytest_run(rng: random.Random, world: World, n_tests: int, failures: list[tuple[str, str]] | None = None,
               verbose: bool = False, duration: float | None = None) -> str:
    """failures: (error_line, traceback_body) pairs; error_line like "KeyError: 'tenant_id'"."""
    failures = failures or []
    files = rng.sample(world.tests, min(len(world.tests), rng.randint(4, len(world.tests))))
    per = [max(1, n_tests // len(files) + rng.randint(-3, 3)) for _ in files]
    total = sum(per)
    skipped = rng.randint(0, 4)
    lines = ["============================= test session starts ==============================",
             f"platform linux -- Python 3.11.{rng.choice([4, 7, 9])}, pytest-8.{rng.choice([1, 2, 3])}.{rng.randint(0, 2)}, pluggy-1.5.0",
             f"rootdir: {world.root}", "configfile: pyproject.toml",
             f"plugins: anyio-4.4.0, cov-5.0.0{rng.choice(['', ', xdist-3.6.1', ', asyncio-0.23.7'])}",
             f"collected {total} items", ""]
    failed_ids = []
    fail_slots = {rng.randrange(len(files)): [] for _ in failures}
    for i, fl in enumerate(failures):
        slot = list(fail_slots)[i % len(fail_slots)]
        fail_slots[slot].append(fl)
    done = 0
    for fi, (path, count) in enumerate(zip(files, per)):
        names = _test_names(rng, world, count)
        fails_here = fail_slots.get(fi, [])
        fail_pos = {rng.randrange(count): fl for fl in fails_here}
        if verbose:
            for j, name in enumerate(names):
                done += 1
                pct = int(100 * done / total)
                status = "FAILED" if j in fail_pos else ("SKIPPED" if rng.random() < 0.01 else "PASSED")
                lines.append(f"{path}::{name} {status}".ljust(72) + f"[{pct:3d}%]")
                if j in fail_pos:
                    failed_ids.append((f"{path}::{name}", fail_pos[j]))
        else:
            marks = "".join("F" if j in fail_pos else ("s" if rng.random() < 0.02 else ".") for j in range(count))
            for j in fail_pos:
                failed_ids.append((f"{path}::{names[j]}", fail_pos[j]))
            done += count
            lines.append(f"{path} {marks}".ljust(72) + f"[{int(100 * done / total):3d}%]")
    if failed_ids:
        lines += ["", "=================================== FAILURES ==================================="]
        for nodeid, (err, tb) in failed_ids:
            name = nodeid.split("::")[-1]
            lines.append(f"_{'_' * 20} {name} {'_' * 20}")
            lines.append(tb.rstrip("\n"))
            lines.append("E       " + err)
            lines.append("")
            lines.append(f"{nodeid.split('::')[0]}:{rng.randint(20, 400)}: {err.split(':')[0]}")
        lines.append("=========================== short test summary info ============================")
        for nodeid, (err, _tb) in failed_ids:
            lines.append(f"FAILED {nodeid} - {err[:90]}")
    dur = duration if duration is not None else round(rng.uniform(2, 95), 2)
    tail = f"{len(failed_ids)} failed, " if failed_ids else ""
    lines.append(f"{'=' * 20} {tail}{total - len(failed_ids) - skipped} passed, {skipped} skipped in {dur}s {'=' * 20}")
    return "\n".join(lines) + "\n"


def py_traceback(rng: random.Random, world: World, frames: int = 3, focus: str | None = None) -> str:
    mods = [m for m in world.modules if m.endswith(".py")]
    out = []
    for i in range(frames):
        path = focus if (focus and i == frames - 1) else rng.choice(mods)
        noun = rng.choice(world.nouns)
        verb = rng.choice(VERBS)
        f = rng.choice(FIELDS)
        out.append(f"{path}:{rng.randint(12, 480)}: in {verb}_{noun}")
        out.append(f"    {rng.choice(['result = ', 'value = ', 'return ', 'row = '])}{verb}_{noun}({rng.choice(['payload', 'session, tenant_id', 'item', 'rows'])})")
        if i == frames - 1:
            out.append(f">       {rng.choice(['amount = row', 'key = payload', 'tenant = ctx'])}[\"{f}\"]")
    return "\n".join(out)


def vitest_run(rng: random.Random, world: World, n_files: int, failures: list[tuple[str, str]] | None = None,
               verbose: bool = False) -> str:
    failures = failures or []
    files = [rng.choice(world.tests) for _ in range(n_files)]
    lines = [f" RUN  v1.{rng.randint(3, 6)}.{rng.randint(0, 9)} {world.root}", ""]
    total_t = passed = 0
    fail_files = set(rng.sample(range(n_files), min(len(failures), n_files)))
    fi = 0
    for i, path in enumerate(files):
        n = rng.randint(3, 40)
        total_t += n
        if i in fail_files:
            lines.append(f" ❯ {path} ({n} tests | 1 failed) {rng.randint(20, 900)}ms")
            if verbose:
                for name in _test_names(rng, world, n - 1):
                    lines.append(f"   ✓ {name}")
            lines.append(f"   × {_test_names(rng, world, 1)[0]}")
            passed += n - 1
        else:
            lines.append(f" ✓ {path} ({n} tests) {rng.randint(5, 600)}ms")
            if verbose:
                for name in _test_names(rng, world, n):
                    lines.append(f"   ✓ {name} {rng.randint(0, 40)}ms")
            passed += n
    for err, detail in failures:
        fi += 1
        path = files[sorted(fail_files)[(fi - 1) % max(1, len(fail_files))]] if fail_files else world.tests[0]
        lines += ["", f"⎯⎯⎯⎯⎯⎯⎯ Failed Tests {len(failures)} ⎯⎯⎯⎯⎯⎯⎯", "",
                  f" FAIL  {path} > {_test_names(rng, world, 1)[0]}", err, detail.rstrip("\n"), ""]
    lines += ["", f" Test Files  {len(failures) and f'{len(failures)} failed | '}{n_files - len(failures)} passed ({n_files})",
              f"      Tests  {len(failures) and f'{len(failures)} failed | '}{passed} passed ({total_t})",
              f"   Start at  {rng.randint(8, 18):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}",
              f"   Duration  {rng.uniform(1, 40):.2f}s (transform {rng.randint(200, 900)}ms, setup 0ms, collect {rng.uniform(1, 9):.2f}s, tests {rng.uniform(1, 30):.2f}s)"]
    return "\n".join(lines) + "\n"


def ts_stack(rng: random.Random, world: World, depth: int = 4) -> str:
    mods = [m for m in world.modules if m.endswith((".ts", ".tsx"))]
    return "\n".join(f" ❯ {rng.choice(VERBS)}{pascal(rng.choice(world.nouns))} {rng.choice(mods)}:{rng.randint(5, 300)}:{rng.randint(3, 40)}"
                     for _ in range(depth))


TS_CODES = [
    ("TS2345", "Argument of type 'string | undefined' is not assignable to parameter of type 'string'."),
    ("TS2339", "Property '{f}' does not exist on type '{N}'."),
    ("TS2322", "Type 'number' is not assignable to type 'string'."),
    ("TS7006", "Parameter '{f}' implicitly has an 'any' type."),
    ("TS2532", "Object is possibly 'undefined'."),
    ("TS2769", "No overload matches this call."),
    ("TS18048", "'{f}' is possibly 'undefined'."),
    ("TS2554", "Expected 2 arguments, but got 1."),
]


def tsc_output(rng: random.Random, world: World, n_errors: int, pinned: list[str] | None = None) -> str:
    mods = [m for m in world.modules if m.endswith((".ts", ".tsx"))]
    lines = []
    for _ in range(n_errors):
        code, msg = rng.choice(TS_CODES)
        msg = msg.format(f=camel(rng.choice(FIELDS)), N=pascal(rng.choice(world.nouns)))
        lines.append(f"{rng.choice(mods)}({rng.randint(3, 400)},{rng.randint(1, 60)}): error {code}: {msg}")
    for p in pinned or []:
        lines.insert(rng.randrange(len(lines) + 1), p)
    lines.sort()
    nfiles = len({l.split('(')[0] for l in lines})
    lines.append("")
    lines.append(f"Found {len(lines) - 1} errors in {nfiles} files.")
    return "\n".join(lines) + "\n"


def go_test_run(rng: random.Random, world: World, failures: list[tuple[str, str]] | None = None,
                verbose: bool = False, race: bool = False) -> str:
    """failures: (pkg_dir, failure_text) e.g. ("internal/ratelimit", "    limiter_test.go:57: ...")."""
    failures = failures or []
    pkgs = sorted({m.rsplit("/", 1)[0] for m in world.modules})
    fail_by = {}
    for pkg, text in failures:
        fail_by.setdefault(pkg, []).append(text)
    lines = []
    for pkg in pkgs:
        full = f"{world.pkg}/{pkg}"
        if pkg.startswith("cmd/"):
            lines.append(f"?   \t{full}\t[no test files]")
            continue
        if verbose or pkg in fail_by:
            for name in _test_names(rng, world, rng.randint(3, 14)):
                lines.append(f"=== RUN   {name}")
                lines.append(f"--- PASS: {name} ({rng.uniform(0, 0.3):.2f}s)")
        if pkg in fail_by:
            for text in fail_by[pkg]:
                name = _test_names(rng, world, 1)[0]
                lines.append(f"=== RUN   {name}")
                lines.append(text.rstrip("\n"))
                lines.append(f"--- FAIL: {name} ({rng.uniform(0, 2):.2f}s)")
            lines.append("FAIL")
            lines.append(f"FAIL\t{full}\t{rng.uniform(0.01, 9):.3f}s")
        else:
            lines.append(f"ok  \t{full}\t{rng.uniform(0.01, 4):.3f}s{'' if rng.random() < 0.7 else '  coverage: ' + str(rng.randint(40, 95)) + '.' + str(rng.randint(0, 9)) + '% of statements'}")
    if fail_by:
        lines.append("FAIL")
    return "\n".join(lines) + "\n"


def go_panic(rng: random.Random, world: World, message: str) -> str:
    lines = [message, "", f"goroutine {rng.randint(7, 400)} [running]:"]
    for _ in range(rng.randint(4, 9)):
        mod = rng.choice(world.modules)
        fn = f"{pascal(rng.choice(VERBS))}{pascal(rng.choice(world.nouns))}"
        lines.append(f"{world.pkg}/{mod.rsplit('/', 1)[0]}.(*{pascal(rng.choice(world.nouns))}).{fn}(0xc000{rng.randint(100000, 999999):06x}, {{0x{rng.randint(1 << 20, 1 << 24):x}, 0x{rng.randint(16, 4096):x}}})")
        lines.append(f"\t{world.root}/{mod}:{rng.randint(20, 400)} +0x{rng.randint(16, 4095):x}")
    lines.append("created by testing.(*T).Run in goroutine 1")
    lines.append("\t/usr/local/go/src/testing/testing.go:1742 +0x390")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------
# greps, trees, logs, git


def grep_output(rng: random.Random, world: World, symbol: str, n: int, pinned: list[str] | None = None) -> str:
    files = list(world.modules) + list(world.tests)
    lines = []
    for _ in range(n):
        path = rng.choice(files)
        ctx = rng.choice([f"    result = {symbol}(payload)", f"from {world.pkg} import {symbol}",
                          f"  const value = await {symbol}(req.params.id);", f"\tif err := {symbol}(ctx, id); err != nil {{",
                          f"    # TODO: {symbol} should not swallow errors", f"  // {symbol} is called on every request",
                          f"    assert {symbol}(item) == expected", f"    return {symbol}(row, strict=True)",
                          f"export {{ {symbol} }} from \"./{module_stem(path)}\";", f"\t\t{symbol}(w, r)"])
        lines.append(f"{path}:{rng.randint(3, 600)}:{ctx}")
    for p in pinned or []:
        lines.insert(rng.randrange(len(lines) + 1), p)
    return "\n".join(sorted(lines)) + "\n"


def dependency_tree(rng: random.Random, world: World, n: int) -> str:
    if world.lang == "ts":
        pk = ["express", "zod", "@prisma/client", "ioredis", "pino", "react", "react-dom", "vite", "vitest", "typescript",
              "@types/node", "undici", "jsonwebtoken", "cookie", "yjs", "lib0", "ws", "date-fns", "lodash-es", "tsx",
              "eslint", "prettier", "@vitejs/plugin-react", "supertest", "msw", "nanoid", "uuid", "semver", "debug",
              "body-parser", "qs", "mime-types", "path-to-regexp", "cookie-signature", "esbuild", "rollup", "picomatch"]
        lines = [f"{world.pkg}@{rng.randint(0, 3)}.{rng.randint(0, 40)}.{rng.randint(0, 9)} {world.root}", ""]
        lines.append("dependencies:")
        for i in range(n):
            depth = rng.choice([0, 1, 1, 2, 2, 2])
            prefix = "│   " * depth + rng.choice(["├── ", "└── "])
            lines.append(f"{prefix}{rng.choice(pk)} {rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 20)}")
        return "\n".join(lines) + "\n"
    if world.lang == "py":
        pk = ["fastapi", "starlette", "pydantic", "pydantic-core", "sqlalchemy", "alembic", "psycopg", "celery", "kombu",
              "redis", "httpx", "anyio", "sniffio", "idna", "certifi", "pyarrow", "numpy", "duckdb", "boto3", "botocore",
              "s3transfer", "jmespath", "python-dateutil", "structlog", "typing-extensions", "click", "rich", "uvicorn",
              "h11", "orjson", "tenacity", "greenlet", "mako", "markupsafe", "vine", "amqp"]
        lines = []
        for i in range(n):
            depth = rng.choice([0, 1, 1, 2])
            name = rng.choice(pk)
            ver = f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 12)}"
            if depth == 0:
                lines.append(f"{name}=={ver}")
            else:
                lines.append("  " * depth + f"- {name} [required: >={ver.rsplit('.', 1)[0]}, installed: {ver}]")
        return "\n".join(lines) + "\n"
    mods = ["github.com/go-chi/chi/v5", "github.com/redis/go-redis/v9", "github.com/golang-jwt/jwt/v5",
            "github.com/jackc/pgx/v5", "github.com/prometheus/client_golang", "github.com/stretchr/testify",
            "golang.org/x/sync", "golang.org/x/time", "google.golang.org/grpc", "google.golang.org/protobuf",
            "github.com/cespare/xxhash/v2", "github.com/dgryski/go-rendezvous", "github.com/beorn7/perks",
            "github.com/prometheus/common", "golang.org/x/net", "golang.org/x/sys", "golang.org/x/text",
            "github.com/robfig/cron/v3", "gopkg.in/yaml.v3", "github.com/google/uuid"]
    lines = []
    for _ in range(n):
        a, b = rng.choice([world.pkg] + mods), rng.choice(mods)
        lines.append(f"{a}{'' if a == world.pkg else '@v' + str(rng.randint(0, 9)) + '.' + str(rng.randint(0, 60)) + '.' + str(rng.randint(0, 9))} "
                     f"{b}@v{rng.randint(0, 9)}.{rng.randint(0, 60)}.{rng.randint(0, 9)}")
    return "\n".join(lines) + "\n"


def log_lines(rng: random.Random, world: World, n: int, pinned: list[str] | None = None,
              start: datetime | None = None) -> str:
    t = start or datetime(2024, 5, rng.randint(2, 27), rng.randint(6, 20), rng.randint(0, 59))
    lines = []
    for _ in range(n):
        t += timedelta(milliseconds=rng.randint(3, 2500))
        lvl = rng.choices(["INFO", "DEBUG", "WARN", "ERROR"], [60, 25, 10, 5])[0]
        noun = rng.choice(world.nouns)
        rid = f"{rng.getrandbits(48):012x}"
        msg = rng.choice([
            f"{rng.choice(['GET', 'POST', 'PATCH'])} /api/v1/{noun}s/{rng.randint(1000, 99999)} {rng.choice([200, 200, 200, 201, 204, 404, 409, 500])} {rng.randint(2, 900)}ms",
            f"{rng.choice(VERBS)} {noun} batch size={rng.randint(1, 500)} elapsed={rng.uniform(0.01, 4):.3f}s",
            f"cache {rng.choice(['hit', 'miss', 'miss', 'evict'])} key={noun}:{rng.randint(1, 99999)}",
            f"pool stats in_use={rng.randint(0, 20)} idle={rng.randint(0, 10)} waiting={rng.randint(0, 3)}",
            f"retrying {noun} {rng.randint(1, 9999)} attempt={rng.randint(1, 5)} backoff={rng.choice([200, 400, 800, 1600])}ms",
            f"{noun} {rng.choice(ADJ)} count={rng.randint(0, 3000)}",
        ])
        lines.append(f"{t.isoformat(timespec='milliseconds')}Z {lvl:<5} [{rng.choice(['http', 'worker', 'db', 'sched', 'cache'])}] req={rid} {msg}")
    for p in pinned or []:
        lines.insert(rng.randrange(len(lines) + 1), p)
    return "\n".join(lines) + "\n"


def git_log(rng: random.Random, world: World, n: int, pinned: list[str] | None = None) -> str:
    subjects = ["fix {noun} rounding in {mod}", "add {noun} index", "refactor {mod} error handling",
                "bump deps", "tests: cover {noun} edge cases", "chore: lint", "perf: cache {noun} lookups",
                "revert \"{noun} batching\"", "docs: {mod} usage", "feat: {noun} export endpoint",
                "ci: split test shards", "fix flaky {noun} test"]
    lines = [f"{rng.getrandbits(28):07x} {s}" for s in pinned or []]
    for _ in range(n):
        lines.append(f"{rng.getrandbits(28):07x} " + rng.choice(subjects).format(noun=rng.choice(world.nouns),
                                                                                 mod=module_stem(rng.choice(world.modules))))
    return "\n".join(lines) + "\n"


def git_diff(path: str, old: str, new: str, rng: random.Random) -> str:
    start = rng.randint(10, 300)
    o, n = old.split("\n"), new.split("\n")
    body = [f"diff --git a/{path} b/{path}", f"index {rng.getrandbits(28):07x}..{rng.getrandbits(28):07x} 100644",
            f"--- a/{path}", f"+++ b/{path}", f"@@ -{start},{len(o)} +{start},{len(n)} @@"]
    body += [f"-{l}" for l in o] + [f"+{l}" for l in n]
    return "\n".join(body) + "\n"


def ls_tree(rng: random.Random, world: World) -> str:
    paths = sorted(set(world.modules) | set(world.tests) | set(world.extra_files))
    return "\n".join(paths) + "\n"
