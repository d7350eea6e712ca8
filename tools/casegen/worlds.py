"""Project worlds the generated sessions take place in: language, layout, vocabulary.

Each world is a plausible repository: module paths, test paths, domain nouns and the tools its
developers use. Content generators draw names from here so files, greps and test logs agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class World:
    key: str
    lang: str  # py | ts | go
    repo: str
    root: str
    description: str
    modules: tuple[str, ...]
    tests: tuple[str, ...]
    nouns: tuple[str, ...]
    test_cmd: str
    pkg: str = ""  # python package / go module path / npm name
    extra_files: tuple[str, ...] = field(default=())


WORLDS: dict[str, World] = {}


def _add(world: World) -> None:
    WORLDS[world.key] = world


_add(World(
    key="ledgerline", lang="py", repo="ledgerline", root="/home/dev/src/ledgerline",
    description="an invoicing and billing service (FastAPI, SQLAlchemy 2, Postgres, Celery workers)",
    pkg="ledgerline",
    modules=(
        "src/ledgerline/invoices/service.py", "src/ledgerline/invoices/models.py",
        "src/ledgerline/invoices/numbering.py", "src/ledgerline/tax/rates.py", "src/ledgerline/tax/rounding.py",
        "src/ledgerline/currency/convert.py", "src/ledgerline/api/routes/invoices.py",
        "src/ledgerline/api/routes/payments.py", "src/ledgerline/api/deps.py", "src/ledgerline/db/session.py",
        "src/ledgerline/db/repositories.py", "src/ledgerline/workers/reconcile.py",
        "src/ledgerline/workers/dunning.py", "src/ledgerline/settings.py", "src/ledgerline/auth/tokens.py",
        "src/ledgerline/events/outbox.py",
    ),
    tests=(
        "tests/invoices/test_service.py", "tests/invoices/test_numbering.py", "tests/tax/test_rates.py",
        "tests/tax/test_rounding.py", "tests/currency/test_convert.py", "tests/api/test_invoices_routes.py",
        "tests/api/test_payments_routes.py", "tests/workers/test_reconcile.py", "tests/workers/test_dunning.py",
        "tests/db/test_repositories.py", "tests/events/test_outbox.py", "tests/auth/test_tokens.py",
    ),
    nouns=("invoice", "line_item", "tax_rate", "customer", "payment", "ledger_entry", "refund", "credit_note",
           "dunning_notice", "exchange_rate"),
    test_cmd="uv run pytest -q",
    extra_files=("pyproject.toml", "alembic.ini", "docker-compose.yml", ".env.example", "Makefile"),
))

_add(World(
    key="harbor", lang="ts", repo="harbor-web", root="/home/dev/work/harbor-web",
    description="an order-management web API and dashboard (Node 20, Express, Prisma, Redis, React)",
    pkg="@harbor/web",
    modules=(
        "src/server.ts", "src/config.ts", "src/routes/orders.ts", "src/routes/inventory.ts", "src/routes/auth.ts",
        "src/auth/session.ts", "src/middleware/rateLimit.ts", "src/middleware/errors.ts",
        "src/lib/cache.ts", "src/lib/logger.ts", "src/db/client.ts", "src/services/inventory.ts",
        "src/services/orders.ts", "src/services/shipping.ts", "src/jobs/reindex.ts",
    ),
    tests=(
        "src/routes/orders.test.ts", "src/routes/inventory.test.ts", "src/auth/session.test.ts",
        "src/middleware/rateLimit.test.ts", "src/lib/cache.test.ts", "src/services/orders.test.ts",
        "src/services/shipping.test.ts", "src/services/inventory.test.ts", "src/jobs/reindex.test.ts",
    ),
    nouns=("order", "sku", "warehouse", "shipment", "session", "cart", "user", "reservation", "carrier"),
    test_cmd="pnpm vitest run",
    extra_files=("package.json", "tsconfig.json", "vitest.config.ts", ".env.example", "prisma/schema.prisma"),
))

_add(World(
    key="tollgate", lang="go", repo="tollgate", root="/home/dev/go/src/github.com/northwind/tollgate",
    description="an HTTP API gateway (Go 1.22, chi router, Redis-backed rate limiting, JWT auth)",
    pkg="github.com/northwind/tollgate",
    modules=(
        "cmd/tollgate/main.go", "internal/config/config.go", "internal/ratelimit/limiter.go",
        "internal/ratelimit/redis_store.go", "internal/proxy/handler.go", "internal/proxy/rewrite.go",
        "internal/auth/jwt.go", "internal/auth/keys.go", "internal/upstream/pool.go",
        "internal/upstream/health.go", "internal/metrics/metrics.go", "internal/middleware/logging.go",
    ),
    tests=(
        "internal/config/config_test.go", "internal/ratelimit/limiter_test.go",
        "internal/ratelimit/redis_store_test.go", "internal/proxy/handler_test.go", "internal/auth/jwt_test.go",
        "internal/upstream/pool_test.go", "internal/upstream/health_test.go", "internal/middleware/logging_test.go",
    ),
    nouns=("route", "upstream", "token", "bucket", "tenant", "key", "request", "backend", "limit"),
    test_cmd="go test ./...",
    extra_files=("go.mod", "Makefile", "config/tollgate.yaml", "deploy/helm/values.yaml"),
))

_add(World(
    key="pipewright", lang="py", repo="pipewright", root="/home/dev/code/pipewright",
    description="a batch data pipeline (Python 3.11, pyarrow, DuckDB, S3, a small DAG runner)",
    pkg="pipewright",
    modules=(
        "src/pipewright/dag.py", "src/pipewright/cli.py", "src/pipewright/schemas.py",
        "src/pipewright/ingest/s3_reader.py", "src/pipewright/ingest/partitions.py",
        "src/pipewright/transform/normalize.py", "src/pipewright/transform/dedupe.py",
        "src/pipewright/load/warehouse.py", "src/pipewright/load/merge.py", "src/pipewright/config.py",
        "src/pipewright/state/checkpoints.py", "src/pipewright/metrics.py",
    ),
    tests=(
        "tests/test_dag.py", "tests/test_cli.py", "tests/ingest/test_s3_reader.py", "tests/ingest/test_partitions.py",
        "tests/transform/test_normalize.py", "tests/transform/test_dedupe.py", "tests/load/test_warehouse.py",
        "tests/load/test_merge.py", "tests/state/test_checkpoints.py",
    ),
    nouns=("partition", "record", "batch", "checkpoint", "schema", "manifest", "event", "watermark", "table"),
    test_cmd="python -m pytest -q",
    extra_files=("pyproject.toml", "pipewright.toml", "Makefile", ".github/workflows/ci.yml"),
))

_add(World(
    key="quillpad", lang="ts", repo="quillpad", root="/Users/dev/projects/quillpad",
    description="a collaborative rich-text editor (TypeScript, React 18, Vite, Yjs-style CRDT sync over WebSocket)",
    pkg="quillpad",
    modules=(
        "src/editor/doc.ts", "src/editor/selection.ts", "src/editor/commands.ts", "src/sync/crdt.ts",
        "src/sync/socket.ts", "src/sync/awareness.ts", "src/store/history.ts", "src/store/presence.ts",
        "src/components/Toolbar.tsx", "src/components/Editor.tsx", "src/components/CommentThread.tsx",
        "server/relay.ts", "server/auth.ts", "server/persistence.ts",
    ),
    tests=(
        "src/editor/doc.test.ts", "src/editor/commands.test.ts", "src/sync/crdt.test.ts", "src/sync/socket.test.ts",
        "src/store/history.test.ts", "src/components/Toolbar.test.tsx", "server/relay.test.ts",
        "server/persistence.test.ts",
    ),
    nouns=("document", "block", "mark", "cursor", "peer", "update", "snapshot", "comment", "range"),
    test_cmd="pnpm test",
    extra_files=("package.json", "tsconfig.json", "vite.config.ts", ".env.example"),
))

_add(World(
    key="cinder", lang="go", repo="cinder", root="/home/dev/go/src/github.com/kilnworks/cinder",
    description="a distributed job scheduler (Go 1.22, Postgres-backed queue, cron expressions, gRPC workers)",
    pkg="github.com/kilnworks/cinder",
    modules=(
        "cmd/cinderd/main.go", "internal/queue/queue.go", "internal/queue/lease.go", "internal/worker/pool.go",
        "internal/worker/heartbeat.go", "internal/store/postgres.go", "internal/store/migrations.go",
        "internal/cron/parse.go", "internal/cron/next.go", "internal/api/server.go", "internal/api/jobs.go",
        "internal/retry/backoff.go",
    ),
    tests=(
        "internal/queue/queue_test.go", "internal/queue/lease_test.go", "internal/worker/pool_test.go",
        "internal/worker/heartbeat_test.go", "internal/store/postgres_test.go", "internal/cron/parse_test.go",
        "internal/cron/next_test.go", "internal/api/jobs_test.go", "internal/retry/backoff_test.go",
    ),
    nouns=("job", "lease", "worker", "schedule", "attempt", "queue", "heartbeat", "run", "tenant"),
    test_cmd="go test ./...",
    extra_files=("go.mod", "Makefile", "deploy/cinder.yaml", "docker-compose.yml"),
))
