"""The cases: each function returns a Spec (world, seed, size layout, beats and probes)."""

from __future__ import annotations

import content as C
from spec import Spec
from work import Layout


def src(path: str, size: int, pinned: str):
    """A read_file output of a generated file with `pinned` text spliced into it."""
    return lambda ctx: C.numbered(C.source_file(ctx.rng, ctx.world, path, size, pinned))


def logs(n: int, pinned: list[str]):
    return lambda ctx: C.log_lines(ctx.rng, ctx.world, n, pinned)


def grep(sym: str, n: int, pinned: list[str]):
    return lambda ctx: C.grep_output(ctx.rng, ctx.world, sym, n, pinned)


def pyfail(err: str, focus: str, frames: int = 3):
    return lambda ctx: (err, C.py_traceback(ctx.rng, ctx.world, frames, focus))


def pytest_out(n: int, failures, verbose: bool = False):
    def make(ctx):
        fl = [f(ctx) if callable(f) else f for f in failures]
        return C.pytest_run(ctx.rng, ctx.world, n, fl, verbose=verbose) + f"\n[exit code {1 if fl else 0}]"
    return make


def vitest_out(files: int, failures, verbose: bool = False):
    def make(ctx):
        fl = [(e, d if isinstance(d, str) else d(ctx)) for e, d in failures]
        return C.vitest_run(ctx.rng, ctx.world, files, fl, verbose=verbose) + f"\n[exit code {1 if fl else 0}]"
    return make


def gotest_out(failures, verbose: bool = False, repeat: int = 1):
    def make(ctx):
        out = "".join(C.go_test_run(ctx.rng, ctx.world, failures if i == repeat - 1 else None, verbose=verbose)
                      for i in range(repeat))
        return out + f"\n[exit code {1 if failures else 0}]"
    return make


# =================================================================================================
# long


def long_auth_refactor() -> Spec:
    s = Spec("long-auth-refactor", "Move harbor-web from Redis sessions to signed stateless cookies", "long",
             "harbor", 1729, 128000, 16384, Layout(turns=42, steps_per_turn=(2, 6), target_chars=1_250_000))
    s.user("goal", 0.0, "We're moving harbor-web off server-side Redis sessions to signed, stateless cookies "
           "(HMAC-SHA256 with key rotation). This is ticket HRB-4127. Start by mapping everywhere `req.session` is read.")
    s.user("pnpm", 0.0, "Use pnpm, not npm — the lockfile is pnpm-lock.yaml and CI rejects a package-lock.json.")
    s.user("api", 0.03, "Important: don't touch the public API of src/routes/orders.ts. The mobile app depends on the exact "
           "response shapes, so keep handlers' inputs and outputs byte-for-byte the same.")
    s.user("commits", 0.06, "Also keep commits small — one logical change each — and prefix every subject with the ticket id.")
    s.tool("port-old", 0.08, "Checking the env template for the dev server settings.", "read_file", {"path": ".env.example"},
           "1\tNODE_ENV=development\n2\tPORT=8080\n3\tDATABASE_URL=postgresql://harbor:harbor@localhost:5432/harbor\n"
           "4\tREDIS_URL=redis://localhost:6379/0\n5\tSESSION_TTL_SECONDS=86400\n6\tLOG_LEVEL=debug\n7\tSHIPPING_API_BASE=https://sandbox.shipfast.example/v2\n")
    s.tool("cookie-name", 0.12, "The cookie settings live in src/config.ts.", "read_file", {"path": "src/config.ts"},
           src("src/config.ts", 5000, 'export const SESSION_COOKIE = {\n  name: "__Host-harbor_sid",\n  maxAgeSeconds: 60 * 60 * 24,\n'
               '  sameSite: "lax" as const,\n  secure: true,\n};\n'), size=5200)
    s.user("staging", 0.14, "For reference, staging is stg-harbor-02.int.northwind.dev. We'll smoke-test there once the cookie path works.")
    s.tool("err-tenant", 0.24, "Running the session tests against the new cookie reader.", "bash", {"cmd": "pnpm vitest run src/auth"},
           vitest_out(6, [("TypeError: Cannot read properties of undefined (reading 'tenantId')",
                           lambda ctx: " ❯ readSession src/auth/session.ts:58:31\n ❯ requireSession src/auth/session.ts:91:18\n" + C.ts_stack(ctx.rng, ctx.world, 2))]), size=4000)
    s.edit("fix-tenant", 0.26, "The reader still expects `req.session`; with cookies the claims are on `req.auth`. "
           "Falling back to an explicit 401 when the cookie is missing instead of dereferencing undefined.",
           "src/auth/session.ts", "  const tenantId = req.session.tenantId;",
           "  const claims = req.auth;\n  if (!claims) throw new UnauthorizedError(\"missing session cookie\");\n  const tenantId = claims.tenantId;")
    s.write("cookies", 0.30, "Creating the cookie signing module.", "src/auth/cookies.ts", 3200,
            'export function signCookie(payload: AuthClaims, key: KeyringEntry): string {\n'
            '  const body = Buffer.from(JSON.stringify(payload)).toString("base64url");\n'
            '  const mac = createHmac("sha256", key.secret).update(body).digest("base64url");\n'
            '  return `${key.kid}.${body}.${mac}`;\n}\n')
    s.say("decision-crypto", 0.34, "Decision: I'll sign with HMAC-SHA256 from node:crypto rather than adding the iron-session "
          "dependency. We only need sign and verify, node:crypto is already available, and it keeps the dependency list unchanged.")
    s.say("dead-end", 0.40, "I tried keeping a Redis fallback behind a flag (dual-read: cookie first, then Redis), but it "
          "doubles p95 latency on the orders routes in the benchmark (41ms -> 86ms). Dropping the dual-read fallback; "
          "we'll do a hard cutover with a forced re-login instead.")
    s.user("cookie-pin", 0.44, "Pin the `cookie` package to 0.6.0 for now, the newer one changed serialize() defaults.")
    s.tool("err-tsc", 0.50, "Type-checking after moving the middleware over.", "bash", {"cmd": "pnpm tsc --noEmit"},
           lambda ctx: C.tsc_output(ctx.rng, ctx.world, 3, ["src/middleware/rateLimit.ts(41,23): error TS2339: Property 'sessionId' does not exist on type 'AuthClaims'."]) + "\n[exit code 2]", size=800)
    s.edit("fix-tsc", 0.52, "AuthClaims calls it `sid`, not `sessionId`; the rate limiter keys on it.",
           "src/middleware/rateLimit.ts", "  const key = `rl:${claims.sessionId}`;", "  const key = `rl:${claims.sid}`;")
    s.write("keyring", 0.56, "Adding the keyring for rotation: current key signs, previous keys still verify.",
            "src/auth/keyring.ts", 2600, 'export const ROTATION_GRACE_DAYS = 14;\n')
    s.user("port-new", 0.62, "Heads up: ops moved the dev server to port 9090 because the new metrics sidecar grabs the old one. "
           "Update .env.example and the docker-compose mapping accordingly.")
    s.user("staging-new", 0.70, "Staging got renamed this morning: it's now stg-harbor-eu1.int.northwind.dev (the -02 box is "
           "decommissioned). Use the new name for the smoke test.")
    s.user("cookie-bump", 0.76, "Change of plan on `cookie`: bump it to 0.7.2, there's a CVE fix in it. I checked serialize() and we're fine.")
    s.say("progress", 0.86, "Status: done — cookie signing (src/auth/cookies.ts), key rotation (src/auth/keyring.ts), and the "
          "orders and inventory routes read claims from the cookie. Remaining: the websocket handshake in src/server.ts and "
          "deleting the Redis session store.")
    s.user("next", 0.93, "Good. Once those two are done, the next step is the load test against staging with `pnpm k6:auth` "
           "— don't run it yet, I'll tell you when the window opens.")
    P = s.probe
    P("goal", "goal", "goal", "What is the overall goal of this session?", ["stateless cookies", "Redis sessions"])
    P("pm", "constraint", "pnpm", "Which package manager must be used in this repo?", ["pnpm"])
    P("api", "constraint", "api", "Which file's public API must not change, and who depends on it?", ["src/routes/orders.ts", "mobile app"])
    P("ticket", "recall", "goal", "Which ticket id must prefix every commit subject?", ["HRB-4127"])
    P("commit-rule", "constraint", "commits", "What did the user ask about the size of commits?", ["small"])
    P("port", "update", "port-new", "Which port must the dev server listen on now? Answer with the number only.", ["9090"], ["8080"])
    P("staging", "update", "staging-new", "What is the staging host's name now?", ["stg-harbor-eu1.int.northwind.dev"], ["stg-harbor-02"])
    P("cookie-ver", "update", "cookie-bump", "Which version of the `cookie` package should be used?", ["0.7.2"], ["0.6.0"])
    P("cookie-name", "recall", "cookie-name", "What is the session cookie's name?", ["__Host-harbor_sid"])
    P("err-tenant", "error", "err-tenant", "What exact error did the session tests raise after switching the reader to cookies?",
      ["Cannot read properties of undefined (reading 'tenantId')"])
    P("fix-tenant", "error", "fix-tenant", "How was the tenantId TypeError fixed?", ["req.auth"])
    P("err-tsc", "error", "err-tsc", "Which property did tsc say does not exist on AuthClaims, and what is it really called?", ["sessionId", "sid"])
    P("crypto", "decision", "decision-crypto", "What was chosen for signing cookies instead of adding iron-session?", ["node:crypto"])
    P("fallback", "decision", "dead-end", "Why was the Redis dual-read fallback dropped?", ["latency"])
    P("files-new", "artifact", "keyring", "Which two new files were created for cookie signing and key rotation?",
      ["src/auth/cookies.ts", "src/auth/keyring.ts"])
    P("remaining", "progress", "progress", "What work remains unfinished?", ["websocket", "Redis session store"])
    P("next", "continuation", "next", "What is the next step after the remaining work, and what command runs it?", ["k6:auth"])
    return s


# =================================================================================================
# desktop


def desktop_tax_rounding() -> Spec:
    s = Spec("desktop-tax-rounding", "Fix a half-cent rounding bug in invoice tax totals", "desktop", "ledgerline", 4101,
             200000, 32000, Layout(turns=5, steps_per_turn=(2, 4), target_chars=60_000, max_out=9000))
    s.user("goal", 0.0, "Invoice totals are off by a cent for some Swiss customers — tax is computed per line and rounded "
           "half-up, but accounting says it must be rounded once per invoice, half-even. Can you fix it in ledgerline?")
    s.user("uv", 0.0, "Use uv for everything (`uv run pytest`), don't pip install into the system python.")
    s.tool("err", 0.25, "Reproducing with the rounding tests.", "bash", {"cmd": "uv run pytest -q tests/tax/test_rounding.py"},
           pytest_out(40, [("AssertionError: assert Decimal('107.66') == Decimal('107.65')", "tests/tax/test_rounding.py:48: in test_invoice_total_rounds_once\n    assert invoice_total(lines, rate=CH_VAT) == Decimal(\"107.65\")")]), size=3000)
    s.say("decision", 0.45, "I'll move rounding out of line_tax() into invoice_total() and use ROUND_HALF_EVEN there. Keeping "
          "per-line amounts unrounded avoids accumulating half-cents; rounding per line is what produced 107.66.")
    s.edit("fix", 0.50, "Applying it.", "src/ledgerline/tax/rounding.py",
           "    return (amount * rate).quantize(CENT, rounding=ROUND_HALF_UP)", "    return amount * rate")
    s.user("vat", 0.62, "The Swiss VAT rate in the fixtures should be 8.1%, it changed from 7.7% in January.")
    s.say("progress", 0.9, "Done: rounding happens once per invoice with ROUND_HALF_EVEN in invoice_total(); the CH fixture uses 8.1%. "
          "Not done yet: the PDF renderer still formats per-line tax from the old field.")
    P = s.probe
    P("goal", "goal", "goal", "What bug is the user asking to fix, and what rounding rule does accounting require?", ["half-even", "per invoice"])
    P("uv", "constraint", "uv", "Which tool must be used to run Python commands?", ["uv"])
    P("err", "error", "err", "What did the failing rounding assertion compare?", ["107.66", "107.65"])
    P("decision", "decision", "decision", "Which rounding mode was chosen and where does rounding happen now?", ["ROUND_HALF_EVEN", "invoice_total"])
    P("file", "artifact", "fix", "Which file was edited to remove per-line rounding?", ["src/ledgerline/tax/rounding.py"])
    P("vat", "update", "vat", "Which Swiss VAT rate should the fixtures use?", ["8.1%"], ["7.7%"])
    P("todo", "progress", "progress", "What is still not done?", ["PDF"])
    P("next", "continuation", "progress", "What should be worked on next?", ["PDF renderer"])
    return s


# =================================================================================================
# autonomous


def auto_flaky_scheduler() -> Spec:
    s = Spec("auto-flaky-scheduler", "Autonomously hunt a lease-expiry race in the cinder job scheduler", "autonomous", "cinder",
             5501, 200000, 32000,
             Layout(turns=1, steps_per_turn=(72, 72), target_chars=1_700_000, giant_outputs=9, max_out=60000, fail_rate=0.18,
                    closing=True))
    s.user("goal", 0.0, "CI has been red on and off for two weeks: jobs occasionally run twice when a worker's lease expires "
           "during a long attempt. Find the root cause in cinder and fix it without my help — I'm offline until tomorrow.\n\n"
           "Ground rules:\n- Go 1.22 toolchain only, and do not add new module dependencies (go.mod must not grow).\n"
           "- Don't change the gRPC API in internal/api/jobs.go; the workers in other repos use it.\n"
           "- Use the local Postgres on port 55432 (docker compose up db), never the shared dev database.\n"
           "- Leave a short write-up in docs/incidents/lease-race.md when done.")
    s.tool("flake", 0.08, "Running the lease tests with -count to reproduce the flake.", "bash",
           {"cmd": "go test -race -count=50 ./internal/queue/... 2>&1 | tail -n 400"},
           gotest_out([("internal/queue", "    lease_test.go:142: job 7f3c2a91 executed 2 times, want 1 (lease expired at attempt 3)")], verbose=True, repeat=6), size=30000)
    s.tool("race", 0.20, "The race detector output in full.", "bash", {"cmd": "go test -race -run TestLeaseRenewal -count=200 ./internal/queue/"},
           lambda ctx: "==================\nWARNING: DATA RACE\nWrite at 0x00c0001a2f38 by goroutine 41:\n  github.com/kilnworks/cinder/internal/queue.(*Lease).Renew()\n      "
           f"{ctx.world.root}/internal/queue/lease.go:88 +0x1c4\n\nPrevious read at 0x00c0001a2f38 by goroutine 39:\n  github.com/kilnworks/cinder/internal/queue.(*Queue).reapExpired()\n      "
           f"{ctx.world.root}/internal/queue/queue.go:203 +0x9a\n==================\n" + C.go_panic(ctx.rng, ctx.world, "--- FAIL: TestLeaseRenewal (0.31s)\n    testing.go:1398: race detected during execution of test") * 30 + "\n[exit code 1]", size=60000)
    s.say("decision", 0.38, "Root cause: reapExpired() reads lease.expiresAt without holding the lease mutex while Renew() "
          "writes it, so the reaper can see a stale deadline and requeue a job that was just renewed. Options: (a) a mutex "
          "around expiresAt, (b) make renewal a single `UPDATE ... WHERE lease_token = $1 AND expires_at > now()` and let "
          "Postgres decide. Going with (b): the database is the source of truth across processes, a mutex only fixes one process.")
    s.edit("fix", 0.45, "Implementing the conditional UPDATE in the lease renewal.", "internal/queue/lease.go",
           "\tl.expiresAt = time.Now().Add(l.ttl)\n\treturn nil",
           "\tres, err := l.db.ExecContext(ctx, `UPDATE leases SET expires_at = now() + $2 WHERE lease_token = $1 AND expires_at > now()`, l.token, l.ttl)\n"
           "\tif err != nil {\n\t\treturn fmt.Errorf(\"renew lease %s: %w\", l.token, err)\n\t}\n\tif n, _ := res.RowsAffected(); n == 0 {\n\t\treturn ErrLeaseLost\n\t}\n\treturn nil")
    s.tool("err2", 0.55, "Running the whole suite against the local database.", "bash", {"cmd": "go test ./... 2>&1"},
           gotest_out([("internal/worker", "    pool_test.go:77: unexpected error: renew lease 9b1e: ErrLeaseLost not handled; worker kept running the attempt")], verbose=True, repeat=5), size=30000)
    s.edit("fix2", 0.60, "The worker has to stop the attempt when renewal reports ErrLeaseLost.", "internal/worker/heartbeat.go",
           "\t\tif err := lease.Renew(ctx); err != nil {\n\t\t\tlog.Warn(\"renew failed\", \"err\", err)\n\t\t}",
           "\t\tif err := lease.Renew(ctx); errors.Is(err, queue.ErrLeaseLost) {\n\t\t\tcancel()\n\t\t\treturn\n\t\t} else if err != nil {\n\t\t\tlog.Warn(\"renew failed\", \"err\", err)\n\t\t}")
    s.tool("upstream-port", 0.70, "Pulling main to rebase before the final run.", "bash", {"cmd": "git pull --rebase origin main && git show --stat HEAD"},
           "From github.com:kilnworks/cinder\n   4e1a2b7..c93d0f2  main       -> origin/main\nSuccessfully rebased and updated refs/heads/fix/lease-race.\n"
           "commit c93d0f2e81b4\nAuthor: Priya Raman <priya@kilnworks.io>\n\n    dev: move local postgres to 55439 (55432 collides with the pgbouncer container)\n\n"
           " docker-compose.yml | 2 +-\n Makefile           | 2 +-\n 2 files changed, 2 insertions(+), 2 deletions(-)\n", size=500)
    s.write("writeup", 0.94, "Writing the incident note.", "docs/incidents/lease-race.md", 1500,
            "# Lease race: jobs executed twice\n\nCause: reapExpired() read expires_at without the lease mutex while Renew() wrote it.\n"
            "Fix: renewal is a conditional UPDATE ... WHERE expires_at > now(); a lost lease returns ErrLeaseLost and the worker cancels the attempt.\n"
            "Verification: go test -race -count=200 ./internal/queue/ is clean.\nFollow-up: add a metric for lost leases.\n")
    s.say("progress", 0.97, "Summary: the double execution came from an unsynchronised read of expires_at in reapExpired(). "
          "Renewal is now a conditional UPDATE in Postgres and workers cancel on ErrLeaseLost. Incident note is in "
          "docs/incidents/lease-race.md. Still open: a metric for lost leases (cinder_lease_lost_total) — not started.")
    P = s.probe
    P("goal", "goal", "goal", "What problem is the agent asked to fix?", ["twice"])
    P("no-deps", "constraint", "goal", "What rule did the user set about Go module dependencies?", ["dependencies"])
    P("api", "constraint", "goal", "Which file's gRPC API must not change?", ["internal/api/jobs.go"])
    P("pg-port", "update", "upstream-port", "Which port does the local Postgres use now? Number only.", ["55439"], ["55432"])
    P("flake", "error", "flake", "What did the flaky lease test report?", ["executed 2 times"])
    P("race", "error", "race", "Which two functions race on the lease deadline?", ["Renew", "reapExpired"])
    P("decision", "decision", "decision", "Which fix option was chosen for the race, and why over a mutex?",
      [["UPDATE ... WHERE lease_token", "conditional UPDATE"], ["source of truth", "across processes"]])
    P("fix-file", "artifact", "fix", "Which file got the conditional UPDATE?", ["internal/queue/lease.go"])
    P("err2", "error", "err2", "What did the full suite report after the first fix?", ["ErrLeaseLost not handled"])
    P("fix2", "artifact", "fix2", "Which file was changed so workers cancel on a lost lease?", ["internal/worker/heartbeat.go"])
    P("writeup", "artifact", "writeup", "Where is the incident write-up?", ["docs/incidents/lease-race.md"])
    P("open", "progress", "progress", "What is still open?", ["cinder_lease_lost_total"])
    P("next", "continuation", "progress", "What should be done next?", ["metric"])
    return s


# =================================================================================================
# edge


def edge_32k_window() -> Spec:
    s = Spec("edge-32k-window", "Small-window model: add a per-route timeout to the tollgate gateway", "edge", "tollgate", 3201,
             32768, 8192, Layout(turns=16, steps_per_turn=(2, 4), target_chars=210_000, max_out=6000),
             notes="32K window: a 20% ratio reserve (6.5K) is smaller than one tool round here; the absolute 16384 reserve leaves 16384.")
    s.user("goal", 0.0, "Add per-route upstream timeouts to tollgate: each route in config/tollgate.yaml gets an optional "
           "`timeout_ms`, falling back to the global default.")
    s.user("no-deps", 0.0, "No new dependencies, and don't rename anything exported from internal/config — the helm chart generator imports it.")
    s.tool("default", 0.10, "Checking the current global default.", "bash", {"cmd": "grep -n timeout config/tollgate.yaml"},
           "4:  upstream_timeout_ms: 2500\n17:    # timeout_ms: per-route override (not implemented yet)\n", size=100)
    s.tool("err", 0.35, "Running the config tests.", "bash", {"cmd": "go test ./internal/config/"},
           gotest_out([("internal/config", "    config_test.go:64: yaml: unmarshal errors:\n          line 23: cannot unmarshal !!str `3s` into int")]), size=1500)
    s.say("decision", 0.40, "Decision: keep `timeout_ms` an integer of milliseconds rather than accepting Go duration strings "
          "like `3s` — the helm values already use integers and mixing both invites mistakes. I'll fix the fixture instead.")
    s.edit("field", 0.5, "Adding the field.", "internal/config/config.go", "type Route struct {\n\tPath     string `yaml:\"path\"`",
           "type Route struct {\n\tPath      string `yaml:\"path\"`\n\tTimeoutMS int    `yaml:\"timeout_ms,omitempty\"`")
    s.user("default-new", 0.62, "SRE says the global default goes down to 1800 ms starting this release.")
    s.say("progress", 0.88, "Done: Route.TimeoutMS parsed and validated; proxy handler uses it via context.WithTimeout. "
          "Remaining: document timeout_ms in deploy/helm/values.yaml.")
    P = s.probe
    P("goal", "goal", "goal", "What feature is being added?", ["timeout"])
    P("no-deps", "constraint", "no-deps", "Which package's exported names must not be renamed?", ["internal/config"])
    P("default", "update", "default-new", "What is the global upstream timeout default now, in ms?", ["1800"], ["2500"])
    P("err", "error", "err", "What did the config test fail on?", ["cannot unmarshal !!str `3s` into int"])
    P("decision", "decision", "decision", "Why is timeout_ms an integer instead of a duration string?", ["helm"])
    P("field", "artifact", "field", "Which struct field was added, and in which file?", ["TimeoutMS", "internal/config/config.go"])
    P("remaining", "progress", "progress", "What remains to be done?", ["deploy/helm/values.yaml"])
    P("next", "continuation", "progress", "What is the next step?", ["document"])
    return s


CASES = [long_auth_refactor, desktop_tax_rounding, auto_flaky_scheduler, edge_32k_window]
