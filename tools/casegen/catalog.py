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
    s.keep_out_of_noise("HRB-4127", "9090", "8080", "stg-harbor-eu1.int.northwind.dev", "stg-harbor-02", "0.7.2", "0.6.0", "__Host-harbor_sid", "Cannot read properties of undefined (reading 'tenantId')", "req.auth", "sessionId")
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
    s.say("cookie-name-said", 0.125, "The session cookie is named __Host-harbor_sid (secure, SameSite=lax, one day max age).")
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
    P("goal", "goal", "goal", "What is the user moving harbor-web off and onto?", [["stateless cookies", "cookies", "cookie"], ["Redis sessions", "Redis session", "Redis"]],
      accept=["Move harbor-web off server-side Redis sessions to signed, stateless cookies (HMAC-SHA256 with key rotation), ticket HRB-4127.", "Replace the Redis session store with HMAC-signed stateless cookies.", "Migrating auth from Redis sessions to signed cookies with key rotation."],
      reject=["Make the batch jobs skip soft-deleted rows and lower noisy log levels.", "Fix the flaky CI tests in src/db/client.ts."])
    P("pm", "constraint", "pnpm", "Which package manager must be used in this repo?", ["pnpm"], ["npm", "yarn"],
      accept=["pnpm", "Use pnpm, not npm: the lockfile is pnpm-lock.yaml and CI rejects a package-lock.json.", "`pnpm` (never npm)"],
      reject=["npm", "npm or pnpm", "yarn"])
    P("ticket", "recall", "goal", "What is the ticket id?", ["HRB-4127"],
      accept=["HRB-4127", "Every commit subject must start with `HRB-4127`.", "HRB-4127 (e.g. \"HRB-4127: sign cookies\")"],
      reject=["HRB-4172", "HRB-412", "LED-882"])
    P("commit-rule", "constraint", "commits", "What did the user ask about the size of commits?", [["small", "one logical change"]],
      accept=["Keep commits small, one logical change each, with the ticket id as prefix.", "small commits", "One logical change per commit, subject prefixed with HRB-4127."],
      reject=["Prefix every commit subject with HRB-4127.", "Squash everything into a single commit at the end."])
    P("port", "update", "port-new", "Which port must the dev server listen on now? Answer with the number only.", ["9090"], ["8080"],
      accept=["9090", "Port 9090 (changed from 8080, the metrics sidecar took the old one).", "`9090`"],
      reject=["8080", "8080 or 9090", "9091"])
    P("staging", "update", "staging-new", "What is the staging host's name now?", ["stg-harbor-eu1.int.northwind.dev"], ["stg-harbor-02"],
      accept=["stg-harbor-eu1.int.northwind.dev", "It's now `stg-harbor-eu1.int.northwind.dev`; it was renamed from stg-harbor-02.int.northwind.dev, which is decommissioned.", "The staging host is stg-harbor-eu1.int.northwind.dev (previously stg-harbor-02)."],
      reject=["stg-harbor-02.int.northwind.dev", "stg-harbor-eu1.int.northwind.dev or stg-harbor-02.int.northwind.dev", "stg-harbor-eu2.int.northwind.dev"])
    P("cookie-ver", "update", "cookie-bump", "Which version should the `cookie` package be bumped to now?", ["0.7.2"], ["0.6.0"],
      accept=["0.7.2", "Bump `cookie` to 0.7.2 (it was pinned to 0.6.0 before; 0.7.2 carries a CVE fix).", "cookie@0.7.2"],
      reject=["0.6.0", "0.6.0 or 0.7.2", "0.7.1"])
    P("cookie-name", "recall", "cookie-name-said", "What is the session cookie named?", ["__Host-harbor_sid"],
      accept=["__Host-harbor_sid", "The session cookie is named `__Host-harbor_sid` (secure, SameSite=lax, one-day max age).", "It's called \"__Host-harbor_sid\"."],
      reject=["harbor_sid", "__Secure-harbor_sid", "__Host-harbor_session"])
    P("err-tenant", "error", "err-tenant", "What TypeError did the session tests raise after switching the reader to cookies?", ["Cannot read properties of undefined", "tenantId"],
      accept=["TypeError: Cannot read properties of undefined (reading 'tenantId')", "`Cannot read properties of undefined (reading \"tenantId\")`, thrown in readSession at src/auth/session.ts:58.", "It was Cannot read properties of undefined, reading tenantId, because req.session was undefined."],
      reject=["TypeError: Cannot read properties of undefined (reading 'sid')", "TypeError: Cannot read properties of null (reading 'tenantId')", "Property 'sessionId' does not exist on type 'AuthClaims'."])
    P("fix-tenant", "error", "fix-tenant", "With cookies, where are the claims?", ["req.auth"],
      accept=["req.auth", "With cookies the claims are on `req.auth`, not `req.session`.", "On req.auth; the reader now throws a 401 when the cookie is missing."],
      reject=["req.cookies", "res.locals.auth", "req.session.auth"])
    P("crypto", "decision", "decision-crypto", "What was chosen for signing cookies instead of adding iron-session?", ["node:crypto"],
      accept=["node:crypto", "HMAC-SHA256 from Node's built-in `node:crypto` rather than adding iron-session: it only needs sign and verify and keeps dependencies unchanged.", "They sign with node:crypto (HMAC-SHA256)."],
      reject=["jsonwebtoken", "The cookie-signature package with HMAC-SHA256.", "@hapi/iron"])
    P("fallback", "decision", "dead-end", "What was wrong with keeping a Redis fallback behind a flag?", [["latency", "p95"]],
      accept=["It doubled p95 latency on the orders routes (41ms -> 86ms), so it was dropped for a hard cutover with forced re-login.", "Latency: the dual-read (cookie then Redis) roughly doubled request latency in the benchmark.", "Because the dual read doubled p95 on the orders routes, from 41ms to 86ms."],
      reject=["Because Redis was being decommissioned.", "Because the mobile app depends on the exact response shapes.", "Keeping two code paths was too complex to maintain."])
    P("files-new", "artifact", "keyring", "Which two new files were created for cookie signing and key rotation?", ["src/auth/cookies.ts", "src/auth/keyring.ts"],
      accept=["src/auth/cookies.ts and src/auth/keyring.ts", "`src/auth/cookies.ts` (signing) and `src/auth/keyring.ts` (key rotation).", "Cookie signing went into src/auth/cookies.ts; rotation into src/auth/keyring.ts."],
      reject=["src/auth/cookie.ts and src/auth/keyring.ts", "src/auth/cookies.ts and src/auth/keys.ts", "src/auth/session.ts and src/auth/cookies.ts"])
    P("remaining", "progress", "progress", "What work remains unfinished?", ["websocket", "Redis session store"],
      accept=["The websocket handshake in src/server.ts and deleting the Redis session store.", "Two things: move the WebSocket handshake to cookie auth, and remove the Redis session store.", "websocket handshake; delete Redis session store"],
      reject=["Only the load test with pnpm k6:auth.", "The websocket handshake in src/server.ts; everything else is done.", "Cookie signing and key rotation."])
    P("next", "continuation", "next", "What is the next step once those two are done, and with which command?", ["k6:auth"],
      accept=["The load test against staging: `pnpm k6:auth`, but only once the user says the window is open.", "pnpm k6:auth", "Run the k6:auth load test on staging (wait for the go-ahead)."],
      reject=["pnpm vitest run", "Run the load test with `pnpm k6:load`.", "Delete the Redis session store."])
    return s


# =================================================================================================
# desktop


def desktop_tax_rounding() -> Spec:
    s = Spec("desktop-tax-rounding", "Fix a half-cent rounding bug in invoice tax totals", "desktop", "ledgerline", 4101,
             200000, 32000, Layout(turns=5, steps_per_turn=(2, 4), target_chars=60_000, max_out=9000))
    s.keep_out_of_noise("107.66", "107.65", "8.1%", "7.7%")
    s.user("goal", 0.0, "Invoice totals are off by a cent for some Swiss customers — tax is computed per line and rounded "
           "half-up, but accounting says it must be rounded once per invoice, half-even. Can you fix it in ledgerline?")
    s.user("uv", 0.0, "Use uv for everything (`uv run pytest`), don't pip install into the system python.")
    s.tool("vat-old", 0.1, "Looking at the tax fixtures.", "read_file", {"path": "tests/tax/conftest.py"},
           "1\tfrom decimal import Decimal\n2\t\n3\timport pytest\n4\t\n5\tCH_VAT = Decimal(\"0.077\")  # Swiss standard rate, 7.7%\n"
           "6\tDE_VAT = Decimal(\"0.19\")\n7\t\n8\t\n9\t@pytest.fixture\n10\tdef ch_lines():\n11\t    return [Line(Decimal(\"33.10\"), 1), Line(Decimal(\"66.45\"), 1)]\n", size=300)
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
    P("goal", "goal", "goal", "What bug is the user asking to fix, and what rounding rule does accounting require?", [["half-even", "half even", "ROUND_HALF_EVEN"], ["per invoice", "per-invoice", "invoice level", "invoice-level"]],
      accept=["Invoice totals are off by a cent for Swiss customers because tax is rounded per line, half-up; accounting requires rounding once per invoice, half-even.", "Fix the one-cent tax discrepancy: round once per invoice using half-even (banker's) rounding.", "Per-line half-up rounding -> round the tax once per-invoice with ROUND_HALF_EVEN."],
      reject=["Invoice totals are off by a cent; accounting wants tax rounded half-up on every line.", "Fix the rounding so each line's tax is rounded half-even.", "The Swiss VAT rate in the fixtures is outdated (7.7% instead of 8.1%)."])
    P("uv", "constraint", "uv", "Which tool must be used to run Python commands?", ["uv"],
      accept=["uv", "Use `uv run` for everything (e.g. `uv run pytest`); never pip install into the system Python.", "Everything goes through uv."],
      reject=["pip", "poetry run pytest", "pip install into a virtualenv, then python -m pytest"])
    P("err", "error", "err", "What did the failing rounding assertion compare?", ["107.66", "107.65"],
      accept=["assert Decimal('107.66') == Decimal('107.65')", "It compared invoice_total(lines, rate=CH_VAT), which returned 107.66, with the expected 107.65.", "107.66 vs 107.65 (off by one cent)"],
      reject=["It compared 107.66 against 107.67.", "assert Decimal('33.10') == Decimal('66.45')"])
    P("decision", "decision", "decision", "Which rounding mode was chosen and where does rounding happen now?", [["ROUND_HALF_EVEN", "half-even", "half even"], ["invoice_total"]], ["ROUND_HALF_UP", "half-up", "half up"],
      accept=["ROUND_HALF_EVEN; rounding now happens once, in invoice_total() instead of line_tax().", "Half-even (banker's rounding), applied once in invoice_total; per-line amounts stay unrounded.", "ROUND_HALF_EVEN, done in `invoice_total()` (line_tax() no longer rounds half-up)."],
      reject=["ROUND_HALF_UP, in invoice_total().", "ROUND_HALF_EVEN, applied per line in line_tax().", "ROUND_HALF_UP or ROUND_HALF_EVEN, in invoice_total()."])
    P("file", "artifact", "fix", "Which file was edited to remove per-line rounding?", ["src/ledgerline/tax/rounding.py"],
      accept=["src/ledgerline/tax/rounding.py", "`src/ledgerline/tax/rounding.py`: line_tax() no longer quantizes.", "The per-line rounding was removed in src\\ledgerline\\tax\\rounding.py."],
      reject=["src/ledgerline/tax/rates.py", "tests/tax/test_rounding.py", "src/ledgerline/invoices/service.py"])
    P("vat", "update", "vat", "Which Swiss VAT rate should the fixtures use?", [["8.1"]], ["7.7", "0.077"],
      accept=["8.1%", "8.1 % (it changed from 7.7% in January)", "The fixtures should use 8.1%, replacing the old 7.7%.", "8.1% (Decimal(\"0.081\"))"],
      reject=["7.7%", "7.7% or 8.1%", "0.077", "8.0%"])
    P("test-file", "recall", "err", "Which test file reproduces the bug?", ["tests/tax/test_rounding.py"],
      accept=["tests/tax/test_rounding.py", "The bug is reproduced by `tests/tax/test_rounding.py` (test_invoice_total_rounds_once)."],
      reject=["tests/tax/conftest.py", "tests/tax/test_rates.py", "src/ledgerline/tax/rounding.py"])
    P("todo", "progress", "progress", "What is still not done?", ["PDF"],
      accept=["The PDF renderer still formats per-line tax from the old field.", "Updating the PDF rendering.", "Only the invoice pdf renderer remains."],
      reject=["Nothing, all done; the tests pass.", "Switching the Swiss VAT fixture to 8.1%.", "Input validation for fetch_ledger_entry."])
    P("next", "continuation", "progress", "What is not done yet?", [["PDF renderer", "PDF rendering", "PDF"]],
      accept=["Fix the PDF renderer so it stops formatting per-line tax from the old field.", "Update the invoice PDF rendering to use the per-invoice tax.", "PDF renderer"],
      reject=["Change the CH fixture to 8.1%.", "Move rounding into invoice_total().", "Tidy the error handling in src/ledgerline/auth/tokens.py."])
    return s


# =================================================================================================
# autonomous


def auto_flaky_scheduler() -> Spec:
    s = Spec("auto-flaky-scheduler", "Autonomously hunt a lease-expiry race in the cinder job scheduler", "autonomous", "cinder",
             5501, 200000, 32000,
             Layout(turns=1, steps_per_turn=(72, 72), target_chars=1_700_000, giant_outputs=9, max_out=60000, fail_rate=0.18,
                    closing=True))
    s.keep_out_of_noise("55439", "55432", "executed 2 times", "Renew", "reapExpired", "ErrLeaseLost not handled", "-count=200")
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
    s.say("pg-port-said", 0.71, "Heads-up from the rebase: local postgres moved to port 55439 (55432 collides with the pgbouncer container), so the integration tests need the new port.")
    s.write("writeup", 0.94, "Writing the incident note.", "docs/incidents/lease-race.md", 1500,
            "# Lease race: jobs executed twice\n\nCause: reapExpired() read expires_at without the lease mutex while Renew() wrote it.\n"
            "Fix: renewal is a conditional UPDATE ... WHERE expires_at > now(); a lost lease returns ErrLeaseLost and the worker cancels the attempt.\n"
            "Verification: go test -race -count=200 ./internal/queue/ is clean.\nFollow-up: add a metric for lost leases.\n")
    s.say("progress", 0.97, "Summary: the double execution came from an unsynchronised read of expires_at in reapExpired(). "
          "Renewal is now a conditional UPDATE in Postgres and workers cancel on ErrLeaseLost. Incident note is in "
          "docs/incidents/lease-race.md. Still open: a metric for lost leases (cinder_lease_lost_total) — not started.")
    P = s.probe
    P("goal", "goal", "goal", "What problem with jobs is the agent asked to fix when a worker's lease expires?", [["twice", "executed 2 times", "double execution"]],
      accept=["Jobs occasionally run twice when a worker's lease expires during a long attempt.", "Double execution: a job gets executed twice after the lease expires mid-attempt.", "Duplicate runs — the job is executed 2 times instead of once."],
      reject=["Jobs get stuck and never run again after the lease expires.", "Jobs are silently dropped when a worker's lease expires.", "The lease heartbeat leaks goroutines."])
    P("no-deps", "constraint", "goal", "What rule did the user set about Go module dependencies?", [["dependencies", "dependency", "go.mod must not grow"]], regex="(?:\\b(?:not?|never|without|zero)\\b|n['’]t\\b)[^.\\n]{0,40}(?:dependenc|\\bdeps\\b|\\bmodules?\\b|go\\.mod)|go\\.mod must not grow",
      accept=["Do not add new module dependencies — go.mod must not grow.", "No new Go module dependencies (Go 1.22 toolchain only).", "go.mod must not grow: no new deps.", "Don't add any new dependencies to go.mod."],
      reject=["Keep the module dependencies up to date with go get -u.", "Vendor all dependencies into vendor/.", "Use the Go 1.22 toolchain only."])
    P("api", "constraint", "goal", "Which file's gRPC API must not change?", ["internal/api/jobs.go"],
      accept=["internal/api/jobs.go", "The gRPC API in `internal/api/jobs.go` must stay unchanged — workers in other repos use it.", "internal/api/jobs.go (used by workers in other repos)"],
      reject=["internal/api/server.go", "internal/api/jobs_test.go", "internal/queue/queue.go"])
    P("pg-port", "update", "pg-port-said", "Which port does the local Postgres use now? Number only.", ["55439"], ["55432"],
      accept=["55439", "55439 (it was 55432 before)", "Port 55439; it moved from 55432 after the rebase."],
      reject=["55432", "55432 or 55439", "5432", "55438"])
    P("flake", "error", "flake", "What did lease_test.go:142 report?", [["executed 2 times", "executed twice", "2 times"]],
      accept=["job 7f3c2a91 executed 2 times, want 1 (lease expired at attempt 3)", "It reported the job was executed twice instead of once.", "lease_test.go:142 — the job ran 2 times, want 1"],
      reject=["job 7f3c2a91 executed 3 times, want 1", "WARNING: DATA RACE in (*Lease).Renew()", "job executed 0 times (lease expired at attempt 3)"])
    P("race", "error", "race", "What is the root cause of the race on the lease deadline, and which two functions are involved?", ["Renew", "reapExpired"],
      accept=["reapExpired() reads lease.expiresAt without holding the lease mutex while Renew() writes it, so the reaper sees a stale deadline and requeues a just-renewed job.", "A data race on expiresAt between (*Lease).Renew and reapExpired.", "Unsynchronised read of expires_at in reapExpired() racing with the write in Renew()"],
      reject=["Renew() and ReleaseLease() both write expiresAt without a lock.", "reapExpired() races with the heartbeat goroutine in pool.go.", "The Postgres UPDATE in ReleaseLease is not atomic."])
    P("fix-file", "artifact", "fix", "Which file got the conditional UPDATE?", ["internal/queue/lease.go"],
      accept=["internal/queue/lease.go", "The conditional UPDATE went into `internal/queue/lease.go` (Lease.Renew).", "internal/queue/lease.go, in the renewal"],
      reject=["internal/queue/queue.go", "internal/worker/heartbeat.go", "internal/queue/lease_test.go"])
    P("err2", "error", "err2", "What unexpected error did the full suite report after the first fix?", [["ErrLeaseLost not handled", "kept running the attempt"]],
      accept=["pool_test.go:77: unexpected error: renew lease 9b1e: ErrLeaseLost not handled; worker kept running the attempt", "A failure in internal/worker: `ErrLeaseLost not handled`.", "It said ErrLeaseLost wasn't handled — the worker kept running the attempt."],
      reject=["WARNING: DATA RACE in Lease.Renew", "job 7f3c2a91 executed 2 times, want 1", "ErrNotFound not handled; worker kept retrying"])
    P("fix2", "artifact", "fix2", "Which file was changed so workers cancel on a lost lease?", ["internal/worker/heartbeat.go"],
      accept=["internal/worker/heartbeat.go", "`internal/worker/heartbeat.go` — it now cancels the attempt on queue.ErrLeaseLost.", "internal/worker/heartbeat.go (the renew loop)"],
      reject=["internal/worker/pool.go", "internal/queue/lease.go", "internal/worker/heartbeat_test.go"])
    P("writeup", "artifact", "writeup", "Where is the incident write-up?", ["docs/incidents/lease-race.md"],
      accept=["docs/incidents/lease-race.md", "The write-up is in `docs/incidents/lease-race.md`.", "docs/incidents/lease-race.md (365 bytes)"],
      reject=["docs/incidents/lease-expiry.md", "docs/lease-race.md", "docs/incidents/README.md"])
    P("verify", "recall", "writeup", "Which race-detector run verifies the fix?", [["-count=200", "count=200"]],
      accept=["go test -race -count=200 ./internal/queue/", "`go test -race -run TestLeaseRenewal -count=200 ./internal/queue/` — clean now.", "The -race run with count=200 over ./internal/queue/"],
      reject=["go test -race -count=50 ./internal/queue/...", "go test -race ./...", "go test -race -count=2000 ./internal/queue/"])
    P("open", "progress", "progress", "What is still open?", ["cinder_lease_lost_total"],
      accept=["A metric for lost leases (cinder_lease_lost_total) — not started.", "`cinder_lease_lost_total` is still open.", "Adding the cinder_lease_lost_total counter."],
      reject=["The incident write-up docs/incidents/lease-race.md.", "A cinder_lease_renewals_total metric.", "Cancelling the worker on ErrLeaseLost in heartbeat.go."])
    P("next", "continuation", "progress", "What is still open?", [["metric", "metrics"]],
      accept=["Adding a metric for lost leases (cinder_lease_lost_total).", "The lost-lease metric; not started yet.", "Prometheus metrics for lost leases."],
      reject=["Writing docs/incidents/lease-race.md.", "Cancelling the attempt on ErrLeaseLost in internal/worker/heartbeat.go.", "Nothing, everything is done."])
    return s


# =================================================================================================
# edge


def edge_32k_window() -> Spec:
    s = Spec("edge-32k-window", "Small-window model: add a per-route timeout to the tollgate gateway", "edge", "tollgate", 3201,
             32768, 8192, Layout(turns=16, steps_per_turn=(2, 4), target_chars=210_000, max_out=6000),
             notes="32K window: a 20% ratio reserve (6.5K) is smaller than one tool round here; the absolute 16384 reserve leaves 16384.")
    s.keep_out_of_noise("1800", "2500", "cannot unmarshal !!str `3s` into int", "fix the fixture")
    s.user("goal", 0.0, "Add per-route upstream timeouts to tollgate: each route in config/tollgate.yaml gets an optional "
           "`timeout_ms`, falling back to the global default.")
    s.user("no-deps", 0.0, "No new dependencies, and don't rename anything exported from internal/config — the helm chart generator imports it.")
    s.tool("default", 0.10, "Checking the current global default.", "bash", {"cmd": "grep -n timeout config/tollgate.yaml"},
           "4:  upstream_timeout_ms: 2500\n17:    # timeout_ms: per-route override (not implemented yet)\n", size=100)
    s.tool("err", 0.35, "Running the config tests.", "bash", {"cmd": "go test ./internal/config/"},
           gotest_out([("internal/config", "    config_test.go:64: yaml: unmarshal errors:\n          line 23: cannot unmarshal !!str `3s` into int")]), size=1500)
    s.say("decision", 0.40, "Decision: keep `timeout_ms` an integer of milliseconds rather than accepting Go duration strings "
          "like `3s` — the helm values already use integers and mixing both invites mistakes. I'll fix the fixture instead.")
    s.edit("field", 0.5, "Adding a TimeoutMS field to the Route struct.", "internal/config/config.go", "type Route struct {\n\tPath     string `yaml:\"path\"`",
           "type Route struct {\n\tPath      string `yaml:\"path\"`\n\tTimeoutMS int    `yaml:\"timeout_ms,omitempty\"`")
    s.user("branch", 0.2, "Work on the branch feat/route-timeouts and open the PR against release/2.7 when done.")
    s.edit("proxy", 0.7, "Applying the per-route timeout at request time.", "internal/proxy/handler.go",
           "\tctx := r.Context()", "\ttimeout := h.cfg.UpstreamTimeout\n\tif route.TimeoutMS > 0 {\n\t\ttimeout = time.Duration(route.TimeoutMS) * time.Millisecond\n\t}\n\tctx, cancel := context.WithTimeout(r.Context(), timeout)\n\tdefer cancel()")
    s.user("default-new", 0.62, "SRE says the global default goes down to 1800 ms starting this release.")
    s.say("progress", 0.88, "Done: Route.TimeoutMS parsed and validated; proxy handler uses it via context.WithTimeout. "
          "Remaining: document timeout_ms in deploy/helm/values.yaml.")
    P = s.probe
    P("goal", "goal", "goal", "What feature is being added?", [["timeout", "timeouts", "timeout_ms", "TimeoutMS"], ["per-route", "per route", "each route", "route-level"]],
      accept=["Per-route upstream timeouts for tollgate: each route gets an optional timeout_ms, falling back to the global default.", "A per-route `timeout_ms` option.", "An upstream timeout per route."],
      reject=["Per-tenant rate limiting.", "Lowering the global upstream timeout to 1800 ms.", "Making EncodeRoute deterministic."])
    P("no-deps", "constraint", "no-deps", "Which package's exported names must not be renamed?", ["internal/config"],
      accept=["internal/config (the helm chart generator imports it).", "Anything exported from `internal/config`.", "The internal/config package."],
      reject=["internal/proxy", "deploy/helm", "internal/upstream"])
    P("default", "update", "default-new", "What is the global upstream timeout default now, in ms?", [["1800", "1800ms"]], ["2500", "2500ms"],
      accept=["1800", "1,800 ms (down from 2500)", "1800 ms; it was 2500 before.", "The global default is now 1800ms, previously 2500."],
      reject=["2500", "2500 or 1800", "1500", "2500 ms", "1800ms or 2500ms"])
    P("err", "error", "err", "What did the config test fail to unmarshal?", [["3s"], ["int", "integer"]],
      accept=["yaml: unmarshal errors: line 23: cannot unmarshal !!str `3s` into int", "The string \"3s\" into an int (timeout_ms).", "`3s` — a duration string that can't go into an integer field."],
      reject=["`2500` into a duration.", "cannot unmarshal !!str `30s` into int", "`3s` into time.Duration"])
    P("decision", "decision", "decision", "Why is timeout_ms an integer instead of a duration string?", [["helm"], ["integer", "integers", "int", "ints", "numbers", "numeric", "mixing", "milliseconds"]],
      accept=["Because the helm values already use integers, and mixing integers with duration strings invites mistakes.", "To stay consistent with the Helm values, which are integer milliseconds.", "The helm values use ints; mixing both formats would be error-prone."],
      reject=["Because the helm chart generator imports internal/config.", "Because Go's time.ParseDuration is slow.", "Because yaml cannot decode durations."])
    P("branch", "recall", "branch", "Which branch is the work on, and which branch does the PR target?", ["feat/route-timeouts", "release/2.7"],
      accept=["feat/route-timeouts; the PR targets release/2.7.", "Work on `feat/route-timeouts`, PR against `release/2.7`.", "feat/route-timeouts -> release/2.7"],
      reject=["feat/route-timeout, PR against release/2.7", "feat/route-timeouts, PR against main", "feat/route-timeouts, PR against release/2.6"])
    P("fix-3s", "error", "decision", "What did the agent fix instead?", [["fixture"]],
      accept=["By fixing the test fixture to use integer milliseconds instead of `3s`.", "They fixed the fixture rather than accepting duration strings.", "The fixture was corrected; timeout_ms stays an int."],
      reject=["By making timeout_ms accept Go duration strings like 3s.", "By switching timeout_ms to a time.Duration.", "By adding a custom UnmarshalYAML that parses 3s."])
    P("proxy", "artifact", "proxy", "Which file applies the per-route timeout at request time?", ["internal/proxy/handler.go"],
      accept=["internal/proxy/handler.go", "`internal/proxy/handler.go`, via context.WithTimeout."],
      reject=["internal/proxy/rewrite.go", "internal/upstream/pool.go", "internal/config/config.go"])
    P("deps", "constraint", "no-deps", "What did the user say about dependencies?", [["dependencies", "dependency", "deps"]], regex="(\\bno\\b|\\bnot\\b|n't|\\bnever\\b|\\bwithout\\b|\\bavoid)[^.\\n]{0,25}(dependenc|deps\\b)|(dependenc\\w*|deps)\\W{1,3}(no\\b|not\\b|none\\b|do not|don't|never)",
      accept=["No new dependencies.", "Don't add any new dependencies.", "No new deps allowed."],
      reject=["New dependencies are fine if they are small.", "Run go mod tidy after adding dependencies.", "Don't rename anything exported from internal/config."])
    P("remaining", "progress", "progress", "What remains to be done?", [["deploy/helm/values.yaml", "helm/values.yaml", "values.yaml", "helm values"]],
      accept=["Document timeout_ms in deploy/helm/values.yaml.", "Documenting timeout_ms in the Helm values.yaml.", "The helm values file still needs timeout_ms documented."],
      reject=["Nothing; the feature is done.", "Apply the timeout in internal/proxy/handler.go.", "Document timeout_ms in config/tollgate.yaml."])
    P("next", "continuation", "progress", "What is still remaining?", [["document", "documenting", "documentation", "documented", "docs"], ["values.yaml", "helm"]],
      accept=["Document timeout_ms in deploy/helm/values.yaml.", "Documentation of timeout_ms in the helm values.", "The docs for timeout_ms in values.yaml."],
      reject=["Nothing.", "Document the change in the README.", "Add the TimeoutMS field to the Route struct."])
    return s



def long_billing_migration() -> Spec:
    s = Spec("long-billing-migration", "Migrate ledgerline invoice numbering to per-tenant sequences", "long", "ledgerline",
             2718, 128000, 16384, Layout(turns=60, steps_per_turn=(2, 5), target_chars=1_700_000, max_out=30000))
    s.keep_out_of_noise("LED-882", "pg-ledger-stg2", "pg-ledger-staging", "1200", "5000", "uq_invoices_tenant_number", "with_for_update", "incompatible type \"UUID\"", "Thursday 14:00 UTC")
    s.user("goal", 0.0, "Goal for this session: invoice numbers must become gapless per-tenant sequences (INV-<tenant>-<n>) "
           "instead of the global Postgres sequence. That means an Alembic migration, a backfill, and changing "
           "src/ledgerline/invoices/numbering.py. Ticket LED-882.")
    s.user("uv", 0.0, "Use uv for everything; never `pip install` anything. And type-check with `uv run mypy src` before you say something is done.")
    s.user("no-orm-events", 0.04, "Please don't use SQLAlchemy ORM events (before_insert etc.) for this — they've bitten us before. Explicit calls only.")
    s.tool("db-host", 0.07, "Looking at the migration settings.", "read_file", {"path": "alembic.ini"},
           "1\t[alembic]\n2\tscript_location = migrations\n3\tsqlalchemy.url = postgresql+psycopg://ledger@pg-ledger-staging.c9x2.eu-central-1.rds.amazonaws.com:5432/ledger\n"
           "4\tfile_template = %%(year)d%%(month).2d%%(day).2d_%%(rev)s_%%(slug)s\n5\t\n6\t[loggers]\n7\tkeys = root,sqlalchemy,alembic\n", size=300)
    s.say("decision-lock", 0.12, "Decision on gaplessness: a `SELECT ... FOR UPDATE` on a per-tenant counter row "
          "(table invoice_counters) rather than Postgres sequences — sequences are never gapless because rolled-back "
          "transactions burn values. The row lock serialises numbering per tenant only, which is fine at our volume.")
    s.write("migration", 0.18, "Writing the migration.", "migrations/versions/20240611_7c1d_invoice_counters.py", 2400,
            'def upgrade() -> None:\n    op.create_table(\n        "invoice_counters",\n        sa.Column("tenant_id", sa.Uuid(), primary_key=True),\n'
            '        sa.Column("next_value", sa.BigInteger(), nullable=False, server_default="1"),\n    )\n')
    s.tool("err-unique", 0.26, "Running the numbering tests.", "bash", {"cmd": "uv run pytest -q tests/invoices/test_numbering.py"},
           pytest_out(60, [("sqlalchemy.exc.IntegrityError: (psycopg.errors.UniqueViolation) duplicate key value violates unique constraint \"uq_invoices_tenant_number\"",
                            "tests/invoices/test_numbering.py:71: in test_concurrent_numbering_is_gapless\n    await asyncio.gather(*(create_invoice(tenant) for _ in range(20)))")]), size=4000)
    s.edit("fix-unique", 0.28, "The counter row was read without the lock in the async path (`session.get` instead of "
           "`select(...).with_for_update()`), so two transactions got the same value.", "src/ledgerline/invoices/numbering.py",
           "    counter = await session.get(InvoiceCounter, tenant_id)",
           "    counter = (await session.execute(\n        select(InvoiceCounter).where(InvoiceCounter.tenant_id == tenant_id).with_for_update()\n    )).scalar_one()")
    s.user("batch-old", 0.33, "For the backfill, process 5000 invoices per batch so we don't hold locks too long.")
    s.say("dead-end", 0.40, "I first tried doing the backfill inside the Alembic migration itself, but on the staging-sized "
          "dump it ran for 40+ minutes inside one transaction and would block deploys. Moving the backfill into a separate "
          "CLI command, `ledgerline backfill-invoice-numbers`, that commits per batch.")
    s.write("backfill", 0.45, "Adding the backfill command.", "src/ledgerline/cli/backfill.py", 3000,
            '@app.command("backfill-invoice-numbers")\ndef backfill_invoice_numbers(batch_size: int = BATCH_SIZE, dry_run: bool = False) -> None:\n'
            '    """Assign INV-<tenant>-<n> numbers to existing invoices, one committed batch at a time."""\n')
    s.tool("err-mypy", 0.52, "Type-checking as requested.", "bash", {"cmd": "uv run mypy src"},
           'src/ledgerline/cli/backfill.py:47: error: Argument 1 to "format_number" has incompatible type "UUID"; expected "str"  [arg-type]\n'
           'src/ledgerline/invoices/numbering.py:88: note: "format_number" defined here\nFound 1 error in 1 file (checked 64 source files)\n[exit code 1]', size=400)
    s.edit("fix-mypy", 0.53, "format_number wants the tenant slug, not the UUID.", "src/ledgerline/cli/backfill.py",
           "        number = format_number(invoice.tenant_id, value)", "        number = format_number(tenant.slug, value)")
    s.user("batch-new", 0.60, "DBA feedback: 5000 per batch still causes replication lag. Use 1200 per batch instead.")
    s.user("db-host-new", 0.68, "FYI the staging database moved: it's pg-ledger-stg2.c9x2.eu-central-1.rds.amazonaws.com now; update alembic.ini.")
    s.user("freeze", 0.74, "Release freeze starts Thursday 14:00 UTC — the migration has to be merged before that.")
    s.say("progress", 0.88, "Status: migration, numbering with row locks, and the backfill command are done and green "
          "(pytest + mypy). Left: the dashboard still sorts by the old global id, and the API docs in docs/api/invoices.md "
          "still describe numeric invoice numbers.")
    s.user("next", 0.95, "Thanks. Next: run the backfill on staging with --dry-run first and send me the summary line.")
    P = s.probe
    P("goal", "goal", "goal", "What is the overall goal of the session?", ["gapless", ["per-tenant", "per tenant"]],
      accept=["Make invoice numbers gapless per-tenant sequences (INV-<tenant>-<n>) instead of the global Postgres sequence: a migration, a backfill and a numbering change.", "Gapless invoice numbering per tenant, replacing the global sequence.", "Switch invoices to gapless, per-tenant numbers (ticket LED-882)."],
      reject=["Make the tax_rate endpoint faster.", "Move invoice numbers onto one global Postgres sequence."])
    P("ticket", "recall", "goal", "What is the ticket number for this work?", ["LED-882"],
      accept=["LED-882", "The ticket is LED-882.", "`LED-882`"],
      reject=["LED-828", "LED-8820", "HRB-4127"])
    P("uv", "constraint", "uv", "What must be run before claiming something is done?", ["mypy"],
      accept=["`uv run mypy src`", "Type-check with mypy (uv run mypy src) before saying anything is done.", "uv run mypy src"],
      reject=["uv run pytest -q", "ruff check src"])
    P("orm-events", "constraint", "no-orm-events", "Which SQLAlchemy mechanism did the user forbid for this change?", [["ORM events", "before_insert"]],
      accept=["SQLAlchemy ORM events (before_insert etc.); explicit calls only.", "ORM events", "No ORM event listeners such as before_insert: use explicit calls."],
      reject=["Postgres sequences", "Alembic data migrations", "session.get()"])
    P("db-host", "update", "db-host-new", "What is the staging database host now?", ["pg-ledger-stg2"], ["pg-ledger-staging"],
      accept=["pg-ledger-stg2.c9x2.eu-central-1.rds.amazonaws.com", "It moved to `pg-ledger-stg2.c9x2.eu-central-1.rds.amazonaws.com` (previously pg-ledger-staging.c9x2...).", "The staging DB host is now pg-ledger-stg2 (alembic.ini updated)."],
      reject=["pg-ledger-staging.c9x2.eu-central-1.rds.amazonaws.com", "pg-ledger-staging or pg-ledger-stg2", "pg-ledger-stg1.c9x2.eu-central-1.rds.amazonaws.com"])
    P("batch", "update", "batch-new", "How many invoices per backfill batch? Number only.", ["1200"], ["5000"],
      accept=["1200", "1,200 invoices per batch (down from 5000 because of replication lag).", "1200 per batch, not 5000."],
      reject=["5000", "5000 or 1200", "1000"])
    P("lock", "decision", "decision-lock", "Why was a per-tenant counter row with FOR UPDATE chosen over Postgres sequences?", [["rolled-back", "burn", "never gapless"]],
      accept=["Postgres sequences are never gapless: rolled-back transactions burn values, while a row lock serialises numbering per tenant.", "Because sequence values are burned by rolled-back transactions, which leaves gaps.", "Sequences are never gapless; the counter row under FOR UPDATE is, and per-tenant serialisation is fine at our volume."],
      reject=["Because sequences are slower than a row lock.", "Because ORM events were forbidden.", "Because sequences can't be created inside an Alembic migration."])
    P("migration", "artifact", "migration", "Which migration file creates the invoice_counters table?", ["20240611_7c1d_invoice_counters.py"],
      accept=["migrations/versions/20240611_7c1d_invoice_counters.py", "`20240611_7c1d_invoice_counters.py`", "The Alembic migration migrations/versions/20240611_7c1d_invoice_counters.py creates it."],
      reject=["migrations/versions/20240611_7c1d_invoice_numbers.py", "migrations/versions/20240612_7c1d_invoice_counters.py", "src/ledgerline/cli/backfill.py"])
    P("err-unique", "error", "err-unique", "Which unique constraint was violated in the concurrency test?", ["uq_invoices_tenant_number"],
      accept=["uq_invoices_tenant_number", "The unique constraint \"uq_invoices_tenant_number\" (UniqueViolation, duplicate key).", "`uq_invoices_tenant_number` on invoices"],
      reject=["uq_invoice_tenant_number", "invoices_pkey", "uq_invoices_number"])
    P("fix-unique", "error", "fix-unique", "How was the counter row read fixed so two transactions don't get the same value?", [["with_for_update", "for update"]],
      accept=["The async path now reads it with `select(...).with_for_update()` instead of `session.get`, so the row is locked.", "with_for_update()", "By locking the counter row with SELECT ... FOR UPDATE in the async path too."],
      reject=["By adding a retry on UniqueViolation.", "With a Postgres advisory lock per tenant.", "It reads the row with session.get and caches it."])
    P("backfill-file", "artifact", "backfill", "Which file holds the backfill command?", ["src/ledgerline/cli/backfill.py"],
      accept=["src/ledgerline/cli/backfill.py", "The command lives in `src/ledgerline/cli/backfill.py`.", "src/ledgerline/cli/backfill.py (ledgerline backfill-invoice-numbers)"],
      reject=["src/ledgerline/cli/backfills.py", "src/ledgerline/invoices/numbering.py", "migrations/versions/20240611_7c1d_invoice_counters.py"])
    P("err-mypy", "error", "err-mypy", "What did mypy complain about in the backfill?", ["UUID", ["format_number", "incompatible type", "str"]],
      accept=["Argument 1 to \"format_number\" has incompatible type \"UUID\"; expected \"str\" (src/ledgerline/cli/backfill.py:47).", "format_number got the tenant UUID where it expects a str; it wants the tenant slug.", "An arg-type error: format_number was passed invoice.tenant_id, a UUID, instead of the slug string."],
      reject=["Argument 1 to \"format_number\" has incompatible type \"int\"; expected \"str\".", "A missing return type annotation on the backfill command.", "Item \"None\" of \"Optional[str]\" has no attribute \"slug\"."])
    P("freeze", "recall", "freeze", "When does the release freeze start?", ["Thursday", "14:00", "UTC"],
      accept=["Thursday 14:00 UTC", "The release freeze starts Thursday at 14:00 UTC; the migration must be merged before.", "Thursday, 14:00 UTC"],
      reject=["Friday 14:00 UTC", "Thursday 16:00 UTC", "Thursday 14:00 CET"])
    P("left", "progress", "progress", "What is left to do?", ["dashboard", ["docs/api/invoices.md", "invoices.md", "API docs"]],
      accept=["The dashboard still sorts by the old global id, and docs/api/invoices.md still describes numeric invoice numbers.", "Fix the dashboard sort order and update the API docs (invoices.md).", "dashboard sorting; docs/api/invoices.md"],
      reject=["Only the dashboard sort order.", "The Alembic migration and the backfill command.", "Run the backfill on staging with --dry-run."])
    P("next", "continuation", "next", "What should be done next, and with which flag first?", ["--dry-run"],
      accept=["Run the backfill on staging with --dry-run first and send the user the summary line.", "`ledgerline backfill-invoice-numbers --dry-run` against staging.", "--dry-run"],
      reject=["Run the backfill on staging with --batch-size 1200.", "Merge the migration before the freeze.", "Run it with --commit."])
    return s


def long_gateway_ratelimit() -> Spec:
    s = Spec("long-gateway-ratelimit", "Replace tollgate's fixed-window limiter with a Redis token bucket", "long", "tollgate",
             31337, 200000, 32000, Layout(turns=55, steps_per_turn=(2, 6), target_chars=2_000_000, max_out=36000))
    s.keep_out_of_noise("redis-rl-eu.svc.northwind.internal", "redis-rl-01", "rate: 400", "Allow() = true after burst of 100", "bucket refill negative", "tollgate_ratelimit_rejected_total")
    s.user("goal", 0.0, "I want to replace tollgate's fixed-window rate limiter with a token bucket stored in Redis, so bursts "
           "at window edges stop letting 2x traffic through. Keep the existing per-tenant limits config working.")
    s.user("go-style", 0.0, "House rules: go 1.22, table-driven tests, errors wrapped with %w, and no global variables for the limiter.")
    s.user("api", 0.05, "Don't change the exported Limiter interface in internal/ratelimit/limiter.go — three other services vendor it.")
    s.tool("redis-old", 0.08, "Where does the limiter get Redis from?", "read_file", {"path": "config/tollgate.yaml"},
           "1\tlisten: \":8443\"\n2\tredis:\n3\t  addr: redis-rl-01.svc.northwind.internal:6379\n4\t  upstream_timeout_ms: 2500\n"
           "5\t  db: 3\n6\tlimits:\n7\t  default: {rate: 50, burst: 100}\n8\t  tenants:\n9\t    acme: {rate: 400, burst: 800}\n10\t    globex: {rate: 120, burst: 240}\n", size=400)
    s.say("decision-lua", 0.15, "Decision: implement take() as a single Lua script (EVALSHA) that refills and takes tokens "
          "atomically, instead of WATCH/MULTI optimistic transactions — under contention WATCH retries pile up and the "
          "script keeps it to one round trip.")
    s.write("script", 0.20, "Adding the Lua script and its loader.", "internal/ratelimit/tokenbucket.lua", 800,
            "-- KEYS[1] bucket key; ARGV: rate, burst, now_ms, cost\nlocal tokens = tonumber(redis.call('HGET', KEYS[1], 't') or ARGV[2])\n"
            "local ts = tonumber(redis.call('HGET', KEYS[1], 'ts') or ARGV[3])\nlocal refill = (tonumber(ARGV[3]) - ts) / 1000 * tonumber(ARGV[1])\n"
            "tokens = math.min(tonumber(ARGV[2]), tokens + refill)\nlocal ok = tokens >= tonumber(ARGV[4])\nif ok then tokens = tokens - tonumber(ARGV[4]) end\n"
            "redis.call('HSET', KEYS[1], 't', tokens, 'ts', ARGV[3])\nredis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2]) / tonumber(ARGV[1]) * 1000))\nreturn ok and 1 or 0\n")
    s.tool("err-burst", 0.30, "Running the limiter tests.", "bash", {"cmd": "go test ./internal/ratelimit/ -run TestBucket -v"},
           gotest_out([("internal/ratelimit", "    limiter_test.go:57: Allow() = true after burst of 100, want false (tokens=0.4)")], verbose=True), size=3000)
    s.edit("fix-burst", 0.32, "Float tokens: 0.4 tokens was being rounded up by the comparison in Go. Compare against cost in the script only.",
           "internal/ratelimit/redis_store.go", "\treturn res.(int64) == 1 || tokens > 0, nil", "\treturn res.(int64) == 1, nil")
    s.user("metric", 0.40, "Please name the new metric tollgate_ratelimit_rejected_total with labels tenant and route. Nothing else.")
    s.tool("err-clock", 0.48, "Load test against the local cluster.", "bash", {"cmd": "make loadtest TARGET=local DURATION=60s"},
           logs(600, ["2024-06-12T10:41:07.311Z ERROR [ratelimit] req=9a7f0c21d4e2 bucket refill negative: now_ms=1718188867311 ts=1718188867509 (clock skew between gateway pods)"]), size=60000)
    s.say("decision-clock", 0.50, "The negative refill is clock skew between pods. Fix: use Redis server time (`redis.call('TIME')`) "
          "inside the script instead of passing now_ms from each gateway.")
    s.user("redis-new", 0.58, "Infra migrated the limiter Redis: it's redis-rl-eu.svc.northwind.internal now, same port. The -01 host goes away Friday.")
    s.user("acme-new", 0.66, "Acme upgraded their plan: their rate is 650 per second now (burst stays 800).")
    s.say("progress", 0.86, "Status: token bucket (Lua, server time), per-tenant config, and the rejected metric are done. "
          "Remaining: the shadow-mode flag so we can compare old and new limiters in production, and the Grafana panel.")
    s.user("next", 0.94, "Let's do the shadow-mode flag next; call it RATELIMIT_SHADOW and default it to on in staging only.")
    P = s.probe
    P("goal", "goal", "goal", "What is being built in this session?", [["token bucket", "token-bucket"], "Redis"],
      accept=["Replace tollgate's fixed-window rate limiter with a token bucket stored in Redis, so bursts at window edges stop letting 2x traffic through, while keeping the per-tenant limits config working.", "A Redis-backed token-bucket rate limiter for tollgate.", "Token bucket limiter in Redis replacing the fixed window."],
      reject=["A fixed-window rate limiter in Redis.", "An in-memory token bucket per gateway pod.", "A shadow-mode flag and a Grafana panel for the limiter."])
    P("style", "constraint", "go-style", "How must errors be wrapped, according to the house rules?", ["%w"], ["%v"],
      accept=["With %w.", "Wrap errors with `%w` via fmt.Errorf(\"...: %w\", err), not %v.", "fmt.Errorf with the %w verb"],
      reject=["With %v.", "%w or %v", "Use errors.Wrap from pkg/errors."])
    P("no-globals", "constraint", "go-style", "What did the house rules say about global variables?", [["no global variables", "global variables", "global variable", "globals", "global state"]], regex="(?:\\bno\\b|\\bnot\\b|\\bnever\\b|\\bavoid|\\bwithout\\b|n't\\b|\\bforbid)[^.\\n]{0,40}\\bglobal|\\bglobals?\\b[^.\\n]{0,40}\\b(?:banned|forbidden|not allowed|disallowed|prohibited)",
      accept=["No global variables for the limiter.", "The limiter must not use global variables; pass it in explicitly.", "Don't use globals for the limiter."],
      reject=["Global variables are fine for the limiter config.", "Use a package-level singleton for the limiter.", "Use table-driven tests."])
    P("api", "constraint", "api", "Which exported interface must not change, and why?", ["Limiter", ["vendor", "vendored", "vendors", "three other services"]],
      accept=["The exported Limiter interface in internal/ratelimit/limiter.go; three other services vendor it.", "`Limiter` must stay as is, because it's vendored by three other services.", "Limiter -- other services vendor the package."],
      reject=["The Store interface in redis_store.go, because the tests mock it.", "The Limiter interface, because the mobile app depends on it.", "The Handler type in internal/proxy/handler.go, because three other services vendor it."])
    P("redis", "update", "redis-new", "Where did infra migrate the limiter Redis?", ["redis-rl-eu.svc.northwind.internal"], ["redis-rl-01"],
      accept=["redis-rl-eu.svc.northwind.internal", "It's now redis-rl-eu.svc.northwind.internal, same port (replacing redis-rl-01.svc.northwind.internal, which goes away Friday).", "`redis-rl-eu.svc.northwind.internal:6379`"],
      reject=["redis-rl-01.svc.northwind.internal", "redis-rl-eu.svc.northwind.internal or redis-rl-01.svc.northwind.internal", "redis-rl-02.svc.northwind.internal"])
    P("acme", "update", "acme-new", "What is Acme's rate limit per second now? Number only.", ["650"], ["rate: 400", "400 or", "or 400", "400/s", "400 per second"],
      accept=["650", "650 per second (up from 400; burst stays 800).", "rate: 650"],
      reject=["400", "650 or 400", "800"])
    P("globex", "recall", "redis-old", "What rate is configured for the globex tenant?", ["120"],
      accept=["120", "120 per second (burst 240).", "globex: {rate: 120, burst: 240}"],
      reject=["240", "50", "400"])
    P("lua", "decision", "decision-lua", "Why a Lua script instead of WATCH/MULTI?", [["one round trip", "round trip", "round-trip", "WATCH retries", "retries", "retry", "contention"]],
      accept=["Under contention WATCH retries pile up; the Lua script refills and takes tokens atomically in one round trip.", "It's one round trip and atomic, instead of optimistic WATCH/MULTI transactions that retry under contention.", "A single EVALSHA round-trip with no retry storms under contention."],
      reject=["Because the Redis cluster doesn't support WATCH/MULTI.", "Because Lua is easier to test with table-driven tests.", "So the exported Limiter interface doesn't change."])
    P("lua-file", "artifact", "script", "Which file did the agent write the Lua token bucket script to?", ["internal/ratelimit/tokenbucket.lua"],
      accept=["internal/ratelimit/tokenbucket.lua", "`internal/ratelimit/tokenbucket.lua` (loaded with EVALSHA).", "The script is in internal/ratelimit/tokenbucket.lua."],
      reject=["internal/ratelimit/token_bucket.lua", "internal/ratelimit/tokenbucket.go", "internal/ratelimit/redis_store.go"])
    P("err-burst", "error", "err-burst", "What did the limiter burst test report?", [["Allow() = true after burst of 100", "Allow() = true", "Allow() returned true", "Allow() returns true", "Allow() was true"], ["burst of 100", "100"]],
      accept=["limiter_test.go:57: Allow() = true after burst of 100, want false (tokens=0.4)", "Allow() returned true after a burst of 100 requests, but it should have been false; 0.4 tokens were rounded up.", "`Allow() = true after burst of 100, want false`"],
      reject=["Allow() = false after burst of 100, want true", "Allow() = true after burst of 200, want false", "bucket refill negative"])
    P("err-clock", "error", "err-clock", "What error about the bucket refill showed up in the load test?", [["bucket refill negative", "negative refill", "refill negative", "negative bucket refill"]],
      accept=["bucket refill negative: now_ms=1718188867311 ts=1718188867509 (clock skew between gateway pods)", "A negative refill (`bucket refill negative`), caused by clock skew between pods.", "The refill came out negative: 'negative refill' from clock skew between gateways."],
      reject=["Allow() = true after burst of 100", "bucket overflow: tokens exceed burst", "redis: connection refused"])
    P("clock", "decision", "decision-clock", "How was the clock skew problem solved?", [["server time", "redis.call('TIME')", "Redis TIME", "TIME command", "time from Redis"]], ["NTP", "chrony"],
      accept=["Use Redis server time (`redis.call('TIME')`) inside the Lua script instead of passing now_ms from each gateway.", "The script reads the clock from Redis itself with the TIME command, not from each pod.", "redis.call(\"TIME\") in the script"],
      reject=["By syncing the gateway pods' server time with NTP.", "By clamping negative refills to zero.", "By passing now_ms from each gateway in milliseconds."])
    P("metric", "recall", "metric", "What must the new metric be called?", ["tollgate_ratelimit_rejected_total"],
      accept=["tollgate_ratelimit_rejected_total", "`tollgate_ratelimit_rejected_total` with labels tenant and route.", "It must be called tollgate_ratelimit_rejected_total (labels: tenant, route; nothing else)."],
      reject=["tollgate_ratelimit_rejections_total", "tollgate_rate_limit_rejected_total", "ratelimit_rejected_total"])
    P("left", "progress", "progress", "What remains after the token bucket work?", [["shadow-mode", "shadow mode", "shadow"], "Grafana"],
      accept=["The shadow-mode flag to compare old and new limiters in production, and the Grafana panel.", "A shadow mode flag (RATELIMIT_SHADOW) and a Grafana dashboard panel.", "shadow-mode flag; Grafana panel"],
      reject=["Only the Grafana panel.", "The Lua token bucket and the rejected metric.", "The shadow-mode flag; nothing else."])
    P("next", "continuation", "next", "What should the shadow-mode flag be called?", ["RATELIMIT_SHADOW"],
      accept=["The shadow-mode flag, named RATELIMIT_SHADOW, defaulting to on in staging only.", "`RATELIMIT_SHADOW`", "Add RATELIMIT_SHADOW (on in staging, off elsewhere)."],
      reject=["RATELIMIT_SHADOW_MODE", "RATE_LIMIT_SHADOW", "The Grafana panel."])
    return s


def long_pipeline_backfill() -> Spec:
    s = Spec("long-pipeline-backfill", "Make the pipewright S3 ingest resumable and backfill March", "long", "pipewright",
             8086, 128000, 16384, Layout(turns=32, steps_per_turn=(2, 5), target_chars=950_000, max_out=32000))
    s.keep_out_of_noise("1.0.0", "0.10.3", "ArrowMemoryError", "KeyError: 'last_key'", "start from the beginning", "row.get(\"last_key\")", "2024-03-04", "2024-03-01", "_pipewright_checkpoints", "65536")
    s.user("goal", 0.0, "The nightly ingest dies halfway on big days and restarts from zero. Make the S3 ingest resumable with "
           "checkpoints, then backfill 2024-03-01 through 2024-03-31 into the warehouse.")
    s.user("bucket", 0.0, "Source bucket is s3://nw-events-raw-eu/clickstream/ (read-only for us). Don't write anything to it.")
    s.user("duckdb", 0.06, "Keep DuckDB pinned at 0.10.3 for now; 1.0 changed the parquet writer and breaks the warehouse loader.")
    s.tool("err-oom", 0.12, "Reproducing the crash on one big partition.", "bash", {"cmd": "python -m pipewright.cli ingest --date 2024-03-14"},
           logs(300, ["2024-03-15T02:13:44.908Z ERROR [worker] req=5fc1e02a9b11 pyarrow.lib.ArrowMemoryError: malloc of size 2147483712 failed"]), size=36000)
    s.say("decision-stream", 0.18, "The crash is reading a whole partition into one Arrow table. I'll switch to "
          "pyarrow.dataset scanning with batch_size=65536 and write a checkpoint after each committed file, rather than "
          "splitting partitions by hour — hourly splits would change the warehouse layout.")
    s.write("checkpoints", 0.24, "Adding the checkpoint store.", "src/pipewright/state/checkpoint_store.py", 2800,
            'CHECKPOINT_TABLE = "_pipewright_checkpoints"\n')
    s.tool("err-key", 0.35, "Tests for the resumable path.", "bash", {"cmd": "python -m pytest -q tests/state"},
           pytest_out(48, [pyfail("KeyError: 'last_key'", "src/pipewright/state/checkpoint_store.py")]), size=3000)
    s.edit("fix-key", 0.37, "Fresh partitions have no checkpoint row yet; treat a missing last_key as 'start from the beginning'.",
           "src/pipewright/state/checkpoint_store.py", "        return row[\"last_key\"]", "        return row.get(\"last_key\") if row else None")
    s.user("ckpt-where", 0.28, "Checkpoints must live in the warehouse, not on local disk — the job runs on ephemeral pods.")
    s.user("window", 0.45, "Backfill window change: finance only needs 2024-03-04 onward, skip the first three days.")
    s.user("duckdb-new", 0.55, "Good news, the loader fix landed upstream — bump DuckDB to 1.0.0 and drop the pin comment.")
    s.say("progress", 0.80, "Backfill status: 2024-03-04 through 2024-03-22 loaded and verified (row counts match the manifest). "
          "2024-03-23 through 2024-03-31 still to run.")
    s.user("next", 0.92, "Pause here. Tomorrow continue the backfill from 2024-03-23, and use --workers 6, not more.")
    P = s.probe
    P("goal", "goal", "goal", "What are the two parts of the goal?", [["resumable", "resume", "checkpoints", "checkpoint"], "backfill"],
      accept=["Make the S3 ingest resumable with checkpoints, then backfill 2024-03-01 through 2024-03-31 (later narrowed to from 2024-03-04) into the warehouse.", "1) resumable ingest via checkpoints; 2) backfill March 2024 into the warehouse.", "Add checkpoints so the nightly ingest can resume instead of restarting from zero, and then run the March backfill."],
      reject=["Backfill March 2024 into the warehouse and bump DuckDB.", "Make the ingest resumable and split partitions by hour.", "Speed up the record endpoint and fix flaky manifest tests."])
    P("bucket", "constraint", "bucket", "Which bucket is read-only and must never be written to?", [["s3://nw-events-raw-eu/clickstream/", "s3://nw-events-raw-eu/clickstream"]],
      accept=["s3://nw-events-raw-eu/clickstream/", "The source bucket `s3://nw-events-raw-eu/clickstream` is read-only: never write to it.", "s3://nw-events-raw-eu/clickstream/ (read-only for us)"],
      reject=["s3://nw-events-raw-eu/", "s3://nw-events-curated-eu/clickstream/", "s3://nw-events-raw-us/clickstream/"])
    P("duckdb", "update", "duckdb-new", "Which DuckDB version should be used now?", ["1.0.0"], ["0.10.3"],
      accept=["1.0.0", "DuckDB 1.0.0 (bumped from 0.10.3 now that the loader fix landed upstream).", "duckdb==1.0.0"],
      reject=["0.10.3", "0.10.3 or 1.0.0", "1.0.1"])
    P("oom", "error", "err-oom", "What pyarrow error crashed the ingest?", ["ArrowMemoryError"],
      accept=["pyarrow.lib.ArrowMemoryError: malloc of size 2147483712 failed", "An `ArrowMemoryError` (malloc of ~2 GiB failed) while reading a whole partition into one table.", "ArrowMemoryError"],
      reject=["MemoryError", "pyarrow.lib.ArrowInvalid", "OSError: out of memory"])
    P("stream", "decision", "decision-stream", "How was the memory problem addressed, and why not split partitions by hour?", [["pyarrow.dataset", "dataset scanning", "dataset scanner", "65536"], ["warehouse layout", "layout"]],
      accept=["Switched to pyarrow.dataset scanning with batch_size=65536 and a checkpoint after each committed file; hourly splits were rejected because they'd change the warehouse layout.", "Stream with pyarrow.dataset in 65536-row batches instead of one Arrow table; splitting by hour would change the layout of the warehouse.", "Dataset scanning in batches; hourly partitions would alter the warehouse layout."],
      reject=["Split each partition by hour to keep memory down.", "Gave the pods more memory; hourly splits would change the warehouse layout.", "Used pandas chunked reads; hourly splits were too slow."])
    P("store", "artifact", "checkpoints", "Which new file stores checkpoints?", ["src/pipewright/state/checkpoint_store.py"],
      accept=["src/pipewright/state/checkpoint_store.py", "The new `src/pipewright/state/checkpoint_store.py` (CHECKPOINT_TABLE = \"_pipewright_checkpoints\").", "Checkpoints are stored by src/pipewright/state/checkpoint_store.py."],
      reject=["src/pipewright/state/checkpoints.py", "src/pipewright/load/checkpoint_store.py", "src/pipewright/state/checkpoint_stores.py"])
    P("err-key", "error", "err-key", "What error did the watermark test raise?", ["KeyError", "last_key"],
      accept=["KeyError: 'last_key'", "A KeyError on 'last_key' in checkpoint_store.py (fresh partitions have no checkpoint row).", "`KeyError('last_key')`"],
      reject=["KeyError: 'created_at'", "TypeError: 'NoneType' object is not subscriptable", "ArrowMemoryError"])
    P("fix-key", "error", "fix-key", "How was the missing last_key handled?", [["start from the beginning", "from the beginning", "from scratch", "row.get(\"last_key\")"]],
      accept=["A missing last_key is treated as 'start from the beginning': row.get(\"last_key\") if row else None.", "Fresh partitions have no checkpoint row, so a missing last_key returns None and the reader starts from the beginning.", "It now starts from the beginning of the partition when there's no checkpoint."],
      reject=["It raises a clear error when last_key is missing.", "It defaults last_key to the last committed file.", "Partitions without a checkpoint are skipped."])
    P("window", "update", "window", "From which date does the backfill window start now?", ["2024-03-04"], ["2024-03-01"],
      accept=["2024-03-04", "From 2024-03-04 (finance skips the first three days; originally 2024-03-01).", "2024-03-04 through 2024-03-31"],
      reject=["2024-03-01", "2024-03-01 or 2024-03-04", "2024-03-23"])
    P("ckpt-where", "constraint", "ckpt-where", "Where must checkpoints live, and why?", ["warehouse", ["ephemeral", "short-lived", "pods"]],
      accept=["In the warehouse, not on local disk, because the job runs on ephemeral pods.", "In the warehouse table _pipewright_checkpoints: the pods are ephemeral, so local state disappears.", "Warehouse; the pods are short-lived and lose their disk."],
      reject=["On local disk under /var/lib/pipewright, for speed.", "In the warehouse, because it's faster to query.", "In S3 next to the source data."])
    P("ckpt-table", "recall", "checkpoints", "What is CHECKPOINT_TABLE set to?", ["_pipewright_checkpoints"],
      accept=["_pipewright_checkpoints", "CHECKPOINT_TABLE = \"_pipewright_checkpoints\"", "It's set to `_pipewright_checkpoints`."],
      reject=["pipewright_checkpoints", "_pipewright_checkpoint", "_pipewright_state"])
    P("batch", "recall", "decision-stream", "Which batch_size does the dataset scanner use?", ["65536"],
      accept=["65536", "batch_size=65536", "65,536 rows per batch"],
      reject=["65535", "32768", "1200"])
    P("done", "progress", "progress", "Through which date is the backfill loaded and verified?", ["2024-03-22"],
      accept=["2024-03-22", "2024-03-04 through 2024-03-22 is loaded and verified (row counts match the manifest).", "Through March 22, i.e. 2024-03-22."],
      reject=["2024-03-23", "2024-03-31", "2024-03-21"])
    P("resume", "continuation", "next", "Where should the backfill continue from, and with how many workers?", ["2024-03-23", ["6", "six"]],
      accept=["From 2024-03-23, with --workers 6.", "Continue at 2024-03-23 using six workers (--workers 6, not more).", "2024-03-23; 6 workers", "Resume at 2024-03-23 with six workers."],
      reject=["From 2024-03-22 with 6 workers.", "From 2024-03-23 with 8 workers.", "From 2024-03-04 with --workers 6."])
    P("workers", "constraint", "next", "What is the maximum number of workers the user allows?", [["6", "six"]],
      accept=["6", "At most 6 workers (`--workers 6`, not more).", "--workers 6"],
      reject=["8", "4", "--workers 12"])
    return s


def long_editor_sync() -> Spec:
    s = Spec("long-editor-sync", "Fix lost edits in quillpad's offline sync and add snapshot compaction", "long", "quillpad",
             4242, 200000, 32000, Layout(turns=74, steps_per_turn=(2, 5), target_chars=2_200_000, max_out=34000))
    s.keep_out_of_noise("7555", "7421", "Hello wrld", "ENOENT", "same directory", "path.join(dir", "2000", "every 500")
    s.user("goal", 0.0, "Users lose edits when they go offline and reconnect. Find out why in quillpad's sync layer and fix it; "
           "after that, add server-side snapshot compaction so documents don't replay 50k updates on load.")
    s.user("pnpm", 0.0, "pnpm only (we have a pnpm workspace). And no class components in React, hooks only.")
    s.user("protocol", 0.05, "The wire protocol version is 3; the relay must keep accepting v3 clients unchanged, the iOS app is on it.")
    s.tool("ws-url", 0.09, "Checking the env template.", "read_file", {"path": ".env.example"},
           "1\tVITE_RELAY_URL=wss://relay.quillpad.dev/v3\n2\tVITE_SENTRY_DSN=\n3\tRELAY_PORT=7421\n4\tPERSIST_DIR=./data/docs\n", size=200)
    s.tool("err-clock", 0.16, "Running the sync tests.", "bash", {"cmd": "pnpm vitest run src/sync"},
           vitest_out(8, [("AssertionError: expected 'Hello wrld' to deeply equal 'Hello world'", lambda ctx: " ❯ src/sync/crdt.test.ts:112:28 offline merge keeps both inserts\n" + C.ts_stack(ctx.rng, ctx.world, 3))]), size=5000)
    s.say("cause", 0.22, "Root cause: on reconnect the client sends its state vector before the offline queue is flushed to "
          "the local doc, so the relay computes a diff that omits the queued inserts. Fix: apply the offline queue first, then "
          "send the state vector (src/sync/socket.ts, onReconnect).")
    s.edit("fix", 0.25, "Reordering onReconnect.", "src/sync/socket.ts",
           "    this.send(encodeStateVector(this.doc));\n    this.flushOfflineQueue();",
           "    this.flushOfflineQueue();\n    this.send(encodeStateVector(this.doc));")
    s.user("port-new", 0.34, "The relay's local port changed to 7555 (7421 collides with the docs site dev server). Update the env template.")
    s.say("decision-snap", 0.42, "For snapshot compaction: snapshot every 500 updates or 10 minutes, whichever comes first, "
          "stored next to the update log; I'm not deleting old updates until the snapshot is fsynced, so a crash can't lose data.")
    s.write("snapshots", 0.48, "Creating the snapshot module on the server.", "server/snapshots.ts", 3000,
            "export const SNAPSHOT_EVERY_UPDATES = 500;\nexport const SNAPSHOT_EVERY_MS = 10 * 60 * 1000;\n")
    s.tool("err-enoent", 0.56, "Running the persistence tests.", "bash", {"cmd": "pnpm vitest run server"},
           vitest_out(5, [("Error: ENOENT: no such file or directory, rename './data/docs/tmp-8f2c.snap' -> './data/docs/doc-41.snap'", " ❯ server/snapshots.ts:77:11 writeSnapshot\n ❯ server/persistence.test.ts:54:5")]), size=3000)
    s.edit("fix-enoent", 0.58, "The tmp file is written to the OS tmpdir but renamed into PERSIST_DIR; write the temp file in the same directory so rename is atomic.",
           "server/snapshots.ts", "  const tmp = path.join(os.tmpdir(), `tmp-${id}.snap`);", "  const tmp = path.join(dir, `tmp-${id}.snap`);")
    s.user("every-new", 0.66, "Ops wants fewer snapshots: make it every 2000 updates instead of 500. Keep the 10-minute rule.")
    s.say("progress", 0.85, "Status: offline-edit loss fixed and covered by a test; snapshots written atomically every 2000 updates "
          "or 10 minutes; load path reads the latest snapshot. Remaining: garbage-collecting updates older than the snapshot, and the metrics endpoint.")
    s.user("next", 0.93, "Do the garbage collection next, but behind a flag QP_SNAPSHOT_GC so we can turn it off.")
    P = s.probe
    P("protocol", "constraint", "protocol", "Which protocol version must the relay keep accepting, and for which client?", [["3", "v3"], "iOS"], ["v2", "v4", "version 2", "version 4"],
      accept=["Protocol version 3, for the iOS app.", "v3 -- the iOS app is still on it, so v3 clients must be accepted unchanged.", "3 (iOS client)"],
      reject=["v2, for the Android app", "v3, for the web client", "v3 or v4, for iOS"])
    P("port", "update", "port-new", "What is the relay's local port now?", ["7555"], ["7421"],
      accept=["7555", "The relay's local port is now 7555 (changed from 7421, which collides with the docs dev server).", "RELAY_PORT=7555"],
      reject=["7421", "7421 or 7555", "7556"])
    P("relay-url", "recall", "ws-url", "What is VITE_RELAY_URL?", ["wss://relay.quillpad.dev/v3"],
      accept=["wss://relay.quillpad.dev/v3", "The relay URL is `wss://relay.quillpad.dev/v3` (VITE_RELAY_URL).", "VITE_RELAY_URL=wss://relay.quillpad.dev/v3"],
      reject=["wss://relay.quillpad.dev/v2", "ws://relay.quillpad.dev/v3", "ws://localhost:7555"])
    P("err", "error", "err-clock", "What did the offline merge test expect to deeply equal, and what did it get?", ["Hello wrld", "Hello world"],
      accept=["AssertionError: expected 'Hello wrld' to deeply equal 'Hello world': it wanted 'Hello world' and got 'Hello wrld'.", "It expected \"Hello world\" but got \"Hello wrld\" (the offline insert was lost).", "Expected Hello world, received Hello wrld."],
      reject=["It got 'Hello wrld'.", "Expected 'Hello world', got 'Hello'.", "Expected 'Hello world' but got 'Hello wrd'."])
    P("cause", "decision", "cause", "What was the root cause of lost offline edits?", ["state vector", "offline queue"],
      accept=["On reconnect the client sent its state vector before the offline queue was flushed to the local doc, so the relay's diff omitted the queued inserts.", "The state vector went out before the offline queue was applied, so the server's diff dropped the offline edits.", "Ordering bug in onReconnect: state vector sent first, offline queue flushed after."],
      reject=["The relay dropped v3 clients on reconnect.", "The offline queue was never persisted to IndexedDB.", "The CRDT merge lost concurrent inserts."])
    P("fix-file", "artifact", "fix", "Which file held the reconnect fix?", ["src/sync/socket.ts"],
      accept=["src/sync/socket.ts", "`src/sync/socket.ts` (onReconnect now flushes the offline queue before sending the state vector).", "The fix went into onReconnect in src/sync/socket.ts."],
      reject=["src/sync/socket.test.ts", "src/sync/crdt.ts", "server/relay.ts"])
    P("snap-file", "artifact", "snapshots", "Which new server file implements snapshots?", ["server/snapshots.ts"],
      accept=["server/snapshots.ts", "`server/snapshots.ts` implements them (writeSnapshot).", "The new file is server/snapshots.ts."],
      reject=["server/snapshot.ts", "server/persistence.ts", "src/sync/snapshots.ts"])
    P("fsync", "decision", "decision-snap", "Why are old updates kept until the snapshot is fsynced?", [["lose data", "data loss", "losing data", "crash"]],
      accept=["So a crash can't lose data: the old updates stay until the snapshot is durably on disk.", "To avoid data loss if the process crashes before the snapshot is fsynced.", "Crash safety: deleting them earlier could leave neither the updates nor a complete snapshot after a crash."],
      reject=["To keep document load times fast.", "Because ops wants fewer snapshots.", "Because the iOS app on protocol v3 still replays old updates."])
    P("enoent", "error", "err-enoent", "What error did the snapshot rename raise in the persistence tests?", ["ENOENT"],
      accept=["ENOENT: no such file or directory, rename './data/docs/tmp-8f2c.snap' -> './data/docs/doc-41.snap'", "An ENOENT from rename in writeSnapshot (server/snapshots.ts:77).", "`ENOENT` (no such file or directory)"],
      reject=["EXDEV: cross-device link not permitted", "EACCES: permission denied", "EEXIST: file already exists"])
    P("enoent-fix", "error", "fix-enoent", "Where is the tmp file written now so rename is atomic?", [["same directory", "path.join(dir", "data/docs"]], ["os.tmpdir"],
      accept=["In the same directory as the final snapshot (PERSIST_DIR), via path.join(dir, `tmp-${id}.snap`), instead of os.tmpdir().", "Next to the target: `path.join(dir, ...)` rather than the OS tmpdir.", "It's written into ./data/docs, the directory it's renamed into."],
      reject=["In os.tmpdir(), then renamed into PERSIST_DIR.", "In /tmp, with a copy instead of rename.", "In os.tmpdir(), under ./data/docs's name."])
    P("every", "update", "every-new", "How many updates between snapshots now?", ["2000"], ["every 500", "500 updates", "or 500", "500 or"],
      accept=["2000", "Every 2,000 updates (was 500), and still every 10 minutes, whichever comes first.", "2000 updates instead of 500."],
      reject=["every 500 updates or 10 minutes", "2000 or 500", "1000"])
    P("left", "progress", "progress", "What remains?", [["garbage-collecting", "garbage collection", "gc"], ["metrics endpoint", "metrics"]],
      accept=["Garbage-collecting updates older than the snapshot, and the metrics endpoint.", "Garbage collection of old updates (behind QP_SNAPSHOT_GC) and a metrics endpoint.", "GC of pre-snapshot updates; metrics endpoint"],
      reject=["Only the metrics endpoint.", "The offline-edit fix and atomic snapshot writes.", "Garbage-collecting old updates; nothing else."])
    P("next", "continuation", "next", "What is next and behind which flag?", ["QP_SNAPSHOT_GC"],
      accept=["Garbage-collect updates older than the snapshot, behind the QP_SNAPSHOT_GC flag so it can be turned off.", "`QP_SNAPSHOT_GC`", "The snapshot garbage collection, gated by QP_SNAPSHOT_GC."],
      reject=["QP_SNAPSHOT_COMPACTION", "Garbage collection behind QP_GC.", "The metrics endpoint, behind QP_METRICS."])
    return s


def desktop_rate_limit_header() -> Spec:
    s = Spec("desktop-ratelimit-headers", "Add RateLimit headers to harbor-web responses", "desktop", "harbor", 4102,
             200000, 32000, Layout(turns=6, steps_per_turn=(2, 4), target_chars=85_000, max_out=12000))
    s.keep_out_of_noise("expected undefined to be '60'", "60 requests")
    s.user("goal", 0.0, "Can you make harbor-web send the standard RateLimit-Limit / RateLimit-Remaining / RateLimit-Reset "
           "headers from src/middleware/rateLimit.ts? Clients keep asking. The default limit is 60 requests per minute.")
    s.user("pnpm", 0.0, "pnpm, not npm. Also don't add a dependency for this, it's three headers.")
    s.tool("err", 0.35, "Running the middleware tests.", "bash", {"cmd": "pnpm vitest run src/middleware"},
           vitest_out(3, [("AssertionError: expected undefined to be '60' // Object.is equality", " ❯ src/middleware/rateLimit.test.ts:33:52 sets RateLimit-Limit header")]), size=1500)
    s.say("decision", 0.45, "I'll use the IETF draft names without the X- prefix, and send Retry-After only on 429 responses, "
          "as the draft recommends.")
    s.edit("fix", 0.5, "Setting the headers before next().", "src/middleware/rateLimit.ts", "    return next();",
           "    res.setHeader(\"RateLimit-Limit\", String(limit));\n    res.setHeader(\"RateLimit-Remaining\", String(Math.max(0, remaining)));\n"
           "    res.setHeader(\"RateLimit-Reset\", String(resetSeconds));\n    return next();")
    s.user("limit", 0.65, "Oh, and the default limit was raised: 120 requests per minute now.")
    s.say("progress", 0.9, "Done: headers are set on every response, Retry-After on 429; default limit 120/min. "
          "Not done: the OpenAPI spec in docs/openapi.yaml doesn't list the headers yet.")
    P = s.probe
    P("goal", "goal", "goal", "Which headers should the middleware send?", [["RateLimit-Remaining", "Remaining"]], ["X-RateLimit"],
      accept=["RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (plus Retry-After on 429s).", "The standard IETF RateLimit headers: Limit, Remaining and Reset, not the X-RateLimit-* ones.", "`RateLimit-Limit` / `RateLimit-Remaining` / `RateLimit-Reset`"],
      reject=["X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset.", "RateLimit-Limit and RateLimit-Reset.", "Only Retry-After."])
    P("err", "error", "err", "What did the failing AssertionError expect?", [["60"], ["undefined", "RateLimit-Limit"]],
      accept=["AssertionError: expected undefined to be '60' // Object.is equality", "It expected the RateLimit-Limit header to be '60', but it was undefined.", "'60' (got undefined)"],
      reject=["expected undefined to be '120'", "expected RateLimit-Remaining to be '59'", "expected 429 to be 200"])
    P("retry", "decision", "decision", "When is Retry-After sent?", [["429", "429s"]],
      accept=["Only on 429 responses.", "Retry-After is sent only when the request is rate-limited (HTTP 429 Too Many Requests).", "on 429s"],
      reject=["On every response, alongside the RateLimit headers.", "On 503 responses.", "When RateLimit-Remaining reaches 1."])
    P("file", "artifact", "fix", "Which file was changed to send the headers?", ["src/middleware/rateLimit.ts"],
      accept=["src/middleware/rateLimit.ts", "`src/middleware/rateLimit.ts`: the headers are set before next()."],
      reject=["src/middleware/rateLimit.test.ts", "src/middleware/errors.ts", "src/server.ts"])
    P("limit", "update", "limit", "What is the default limit per minute now?", ["120"], ["60"],
      accept=["120", "120 requests per minute (raised from 60).", "120/min; it was 60 before.", "120 requests/minute (previously 60)"],
      reject=["60", "60 requests per minute", "60 or 120 requests per minute", "100 requests per minute"])
    P("naming", "decision", "decision", "Which header names did the agent decide to use?", [["IETF", "RateLimit-Limit", "RateLimit-Remaining"]], ["X-RateLimit"],
      accept=["The IETF draft names without the X- prefix.", "RateLimit-Limit / RateLimit-Remaining / RateLimit-Reset (no X- prefix), plus Retry-After on 429.", "The standard RateLimit-* header names from the ietf draft, not X-RateLimit-*."],
      reject=["X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset", "The legacy X-RateLimit-* headers.", "Retry-After only"])
    P("todo", "progress", "progress", "What is not done yet?", [["docs/openapi.yaml", "openapi.yaml", "OpenAPI"]],
      accept=["The OpenAPI spec in docs/openapi.yaml doesn't list the headers yet.", "Documenting the headers in the OpenAPI spec.", "docs/openapi.yaml"],
      reject=["Nothing, everything is done.", "Sending Retry-After on 429 responses.", "Raising the default limit to 120."])
    P("next", "continuation", "progress", "What should happen next?", ["OpenAPI"],
      accept=["Add the RateLimit headers to docs/openapi.yaml.", "Document the headers in the OpenAPI spec.", "Update the openapi docs"],
      reject=["Raise the default limit to 120.", "Make encodeShipment deterministic.", "Add Retry-After on 429."])
    return s


def desktop_go_env_config() -> Spec:
    s = Spec("desktop-go-env-config", "Let tollgate read its listen address from the environment", "desktop", "tollgate", 4103,
             200000, 32000, Layout(turns=4, steps_per_turn=(2, 3), target_chars=30_000, max_out=5000))
    s.keep_out_of_noise("want \":9443\"", "before the yaml was decoded", "TOLLGATE_ADDR", "TOLLGATE_LISTEN")
    s.user("goal", 0.0, "Small one: tollgate should take its listen address from TOLLGATE_LISTEN if set, else use the yaml value.")
    s.user("rule", 0.0, "Keep it in internal/config, and use os.LookupEnv so an empty value still counts as set.")
    s.tool("err", 0.4, "Tests.", "bash", {"cmd": "go test ./internal/config/"},
           gotest_out([("internal/config", "    config_test.go:31: Listen = \":8443\", want \":9443\" (TOLLGATE_LISTEN was set)")]), size=800)
    s.edit("fix", 0.5, "The override ran before the yaml was decoded, so the file value won.", "internal/config/config.go",
           "\tapplyEnv(&cfg)\n\tif err := yaml.Unmarshal(raw, &cfg); err != nil {",
           "\tif err := yaml.Unmarshal(raw, &cfg); err != nil {")
    s.user("name", 0.7, "Naming change from review: call it TOLLGATE_ADDR instead, to match the other services.")
    s.say("progress", 0.92, "Done: TOLLGATE_ADDR overrides the yaml listen address (LookupEnv, applied after decoding). "
          "Left: mention it in the README's configuration table.")
    P = s.probe
    P("goal", "goal", "goal", "What should tollgate take from the environment, if TOLLGATE_LISTEN is set?", [["listen address", "listen addr", "listening address", "address to listen on", "address it listens on"]],
      accept=["Its listen address (from TOLLGATE_LISTEN, else the yaml value).", "The listen address.", "The address to listen on, overriding the yaml `listen` value."],
      reject=["The TLS certificate path.", "The upstream timeout.", "The log level."])
    P("lookup", "constraint", "rule", "Which function must be used to read the variable, so that an empty value still counts as set?", [["LookupEnv"]],
      accept=["os.LookupEnv", "`os.LookupEnv`, so that an empty value still counts as set.", "LookupEnv from the os package"],
      reject=["os.Getenv", "os.Getenv, then check for an empty string", "os.ExpandEnv"])
    P("err", "error", "err", "What did the config test report for Listen?", [["want \":9443\"", "wanted \":9443\"", "expected \":9443\"", "should be \":9443\""]],
      accept=["Listen = \":8443\", want \":9443\" (TOLLGATE_LISTEN was set)", "It got :8443 but wanted :9443.", "Listen was \":8443\" instead of the expected \":9443\"."],
      reject=["Listen = \":9443\", want \":8443\"", "Listen = \"\", want \":8443\"", "Listen = \":8443\", want \":9444\""])
    P("fix", "error", "fix", "Why did the file value win over the override?", [["before the yaml was decoded", "before yaml.Unmarshal", "before decoding", "before the yaml", "before the file was decoded", "before yaml decoding"]],
      accept=["The env override ran before the yaml was decoded, so the file value overwrote it.", "applyEnv was called before yaml.Unmarshal, so decoding the file clobbered the env value.", "Because the override was applied before decoding the YAML."],
      reject=["Because os.Getenv treated an empty value as unset.", "The override was applied after the yaml was decoded.", "The yaml key was misspelled."])
    P("name", "update", "name", "What is the environment variable called now?", ["TOLLGATE_ADDR"], ["TOLLGATE_LISTEN"],
      accept=["TOLLGATE_ADDR", "It's TOLLGATE_ADDR now (renamed from TOLLGATE_LISTEN in review).", "`TOLLGATE_ADDR`, instead of TOLLGATE_LISTEN, to match the other services."],
      reject=["TOLLGATE_LISTEN", "TOLLGATE_LISTEN or TOLLGATE_ADDR", "TOLLGATE_ADDRESS"])
    P("file", "artifact", "fix", "Which file was edited?", ["internal/config/config.go"],
      accept=["internal/config/config.go", "`internal/config/config.go` (applyEnv moved after yaml.Unmarshal)."],
      reject=["internal/config/config_test.go", "internal/proxy/handler.go", "cmd/tollgate/main.go"])
    P("where", "constraint", "rule", "Where did the user say to keep it?", ["internal/config"],
      accept=["internal/config", "Keep it inside the `internal/config` package.", "In internal/config/."],
      reject=["internal/proxy", "cmd/tollgate/main.go", "internal/auth"])
    P("left", "progress", "progress", "What is left?", ["README"],
      accept=["Mention TOLLGATE_ADDR in the README's configuration table.", "Only the README update.", "Docs: the readme still needs the new variable."],
      reject=["Nothing, everything is done.", "Rename TOLLGATE_LISTEN to TOLLGATE_ADDR.", "Update the CHANGELOG."])
    P("next", "continuation", "progress", "What is the next step?", [["configuration table", "config table", "README"]],
      accept=["Add TOLLGATE_ADDR to the README's configuration table.", "Document the variable in the README config table.", "Update the README."],
      reject=["Write a test for the env override.", "Fix the ReconcileRoute crash for buckets without tenant_id.", "Update the CHANGELOG."])
    return s


def desktop_cli_dry_run() -> Spec:
    s = Spec("desktop-cli-dry-run", "Add a --dry-run flag to pipewright's load command", "desktop", "pipewright", 4104,
             200000, 32000, Layout(turns=7, steps_per_turn=(2, 4), target_chars=110_000, max_out=14000))
    s.keep_out_of_noise("unexpected keyword argument 'dry_run'", "analytics_dev_jr")
    s.user("goal", 0.0, "Add `--dry-run` to `pipewright load`: it should plan the merge and print the row counts per table "
           "without touching the warehouse.")
    s.user("click", 0.0, "We use click, not argparse, and keep the output machine-readable: one JSON object per table.")
    s.tool("err", 0.3, "Running the CLI tests.", "bash", {"cmd": "python -m pytest -q tests/test_cli.py"},
           pytest_out(30, [pyfail("TypeError: merge_partitions() got an unexpected keyword argument 'dry_run'", "src/pipewright/load/merge.py", 2)]), size=2500)
    s.say("decision", 0.4, "Rather than threading dry_run through merge_partitions(), I'll split it into plan_merge() (pure, "
          "returns a MergePlan) and apply_merge(plan). --dry-run just prints the plan. That keeps the warehouse code free of flags.")
    s.write("plan", 0.5, "New module for the MergePlan type.", "src/pipewright/load/plan.py", 2000,
            "@dataclass(frozen=True)\nclass MergePlan:\n    table: str\n    inserts: int\n    updates: int\n    deletes: int\n")
    s.user("warehouse", 0.6, "For manual testing use the warehouse schema analytics_dev_jr, not analytics_dev (that one is shared).")
    s.say("progress", 0.9, "Done: plan_merge/apply_merge split, --dry-run prints one JSON object per table. Remaining: "
          "a test for the empty-partition case.")
    P = s.probe
    P("goal", "goal", "goal", "What flag is being added, to which command?", [["dry-run"], ["pipewright load", "load command", "load subcommand"]],
      accept=["`--dry-run`, on `pipewright load`.", "A --dry-run flag for pipewright's load command: plan the merge and print row counts per table without touching the warehouse.", "pipewright load --dry-run"],
      reject=["--dry-run on pipewright merge", "A --plan flag on pipewright load", "--verbose on the ingest command"])
    P("click", "constraint", "click", "Which CLI library must be used, and what output format?", ["click", "JSON"], ["argparse"],
      accept=["click (not argparse), with machine-readable JSON output: one object per table.", "Click; the output is one JSON object per table.", "click + JSON"],
      reject=["argparse, with JSON output.", "click, with a human-readable table.", "argparse or click; JSON lines."])
    P("err", "error", "err", "What TypeError did the CLI tests hit in merge_partitions()?", [["unexpected keyword argument", "unexpected keyword"], ["dry_run"]],
      accept=["TypeError: merge_partitions() got an unexpected keyword argument 'dry_run'", "merge_partitions() got an unexpected keyword argument `dry_run`", "It was called with dry_run, which it doesn't take: unexpected keyword argument."],
      reject=["TypeError: merge_partitions() missing 1 required positional argument: 'dry_run'", "TypeError: plan_merge() got an unexpected keyword argument 'plan'", "KeyError: 'amount'"])
    P("decision", "decision", "decision", "How was dry-run implemented instead of a flag in merge_partitions?", ["plan_merge", "apply_merge"],
      accept=["Split merge_partitions() into plan_merge() (pure, returns a MergePlan) and apply_merge(plan); --dry-run just prints the plan.", "plan_merge + apply_merge split", "By separating planning (`plan_merge`) from applying (`apply_merge`)."],
      reject=["By threading a dry_run flag through merge_partitions().", "merge_partitions(dry_run=True) returns a MergePlan.", "A try/except that rolls back the warehouse transaction."])
    P("plan-file", "artifact", "plan", "Which new file defines MergePlan?", ["src/pipewright/load/plan.py"],
      accept=["src/pipewright/load/plan.py", "MergePlan lives in the new `src/pipewright/load/plan.py`."],
      reject=["src/pipewright/load/merge.py", "src/pipewright/load/warehouse.py", "src/pipewright/plan.py"])
    P("schema", "recall", "warehouse", "Which warehouse schema should be used for manual testing?", ["analytics_dev_jr"], ["analytics_dev"],
      accept=["analytics_dev_jr", "Use `analytics_dev_jr`, not analytics_dev (that one is shared).", "The warehouse schema analytics_dev_jr."],
      reject=["analytics_dev", "analytics_dev or analytics_dev_jr", "analytics_prod"])
    P("output", "progress", "progress", "What does --dry-run print for each table?", [["JSON"]],
      accept=["One JSON object per table.", "A JSON object with the table's planned row counts.", "a json line for each table with its row counts"],
      reject=["A human-readable table of row counts.", "The SQL statements it would run.", "A progress bar per table."])
    P("left", "progress", "progress", "What remains?", [["empty-partition", "empty partition", "empty partitions"]],
      accept=["A test for the empty-partition case.", "Still need a test covering empty partitions.", "Only the empty partition test remains."],
      reject=["Nothing, everything is done.", "Split merge_partitions into plan_merge and apply_merge.", "Add the --dry-run flag to pipewright load."])
    P("next", "continuation", "progress", "What is the next step?", [["test", "tests", "testing"], ["empty-partition", "empty partition", "empty partitions"]],
      accept=["Write a test for the empty-partition case.", "Add tests covering empty partitions.", "Testing the empty partition case."],
      reject=["Run the tests again.", "Test --dry-run against analytics_dev.", "Split merge_partitions into plan_merge and apply_merge."])
    return s


def auto_dependency_upgrade() -> Spec:
    s = Spec("auto-dependency-upgrade", "Autonomous upgrade of harbor-web to Express 5 and Prisma 5", "autonomous", "harbor",
             6601, 128000, 16384,
             Layout(turns=2, steps_per_turn=(22, 26), target_chars=1_300_000, giant_outputs=7, max_out=60000, fail_rate=0.2))
    s.keep_out_of_noise(">=22.4", "stays on 20.x", "node:22.4-bookworm", "4.19.2", "app.del()", "Unexpected ( at 14", "rejectOnNotFound", "5.14.0")
    s.user("goal", 0.0, "Please upgrade harbor-web to Express 5 and Prisma 5 on branch chore/deps-2024q2, fix whatever breaks, "
           "and get `pnpm test` and `pnpm tsc --noEmit` green. Work through it on your own.\n\nConstraints: pnpm only; "
           "Node stays on 20.x (no engines bump); do not regenerate prisma migrations — only the client.")
    s.tool("tree", 0.06, "Full dependency tree before touching anything.", "bash", {"cmd": "pnpm list --depth 3"},
           lambda ctx: C.dependency_tree(ctx.rng, ctx.world, 2600) + "│   ├── express 4.19.2\n│   └── @prisma/client 4.16.2\n", size=90000)
    s.tool("err-path", 0.18, "Type-check after the version bump.", "bash", {"cmd": "pnpm tsc --noEmit"},
           lambda ctx: C.tsc_output(ctx.rng, ctx.world, 900, ["src/routes/orders.ts(12,14): error TS2769: No overload matches this call. Express 5 removed the `app.del()` alias; use `app.delete()`."]) + "\n[exit code 2]", size=100000)
    s.edit("fix-path", 0.22, "Express 5 dropped app.del(); switching to app.delete().", "src/routes/orders.ts",
           "router.del(\"/orders/:id\", requireSession, cancelOrder);", "router.delete(\"/orders/:id\", requireSession, cancelOrder);")
    s.tool("err-regex", 0.34, "Running the tests.", "bash", {"cmd": "pnpm test"},
           vitest_out(300, [("TypeError: Unexpected ( at 14, expected END: /inventory/:sku(\\d+)", " ❯ node_modules/.pnpm/path-to-regexp@8.1.0/node_modules/path-to-regexp/dist/index.js:152:11\n ❯ src/routes/inventory.ts:27:8")], verbose=True), size=85000)
    s.say("decision", 0.40, "path-to-regexp 8 (used by Express 5) no longer supports inline regex in route params. Options: pin "
          "path-to-regexp, or validate the param in a handler. Choosing validation with zod in the handler — pinning a "
          "transitive dependency of Express would be fragile.")
    s.user("turn2", 0.55, "Update from me: the team decided Node 22 is fine after all — bump engines to >=22.4 and the CI image "
           "to node:22.4-bookworm. Keep going.")
    s.tool("err-prisma", 0.70, "Prisma tests with the new client.", "bash", {"cmd": "pnpm vitest run src/services"},
           vitest_out(40, [("PrismaClientValidationError: Unknown argument `rejectOnNotFound`. Available options are marked with ?.", " ❯ src/services/inventory.ts:88:22 reserveSku")]), size=6000)
    s.edit("fix-prisma", 0.72, "Prisma 5 removed rejectOnNotFound; use findUniqueOrThrow.", "src/services/inventory.ts",
           "  const sku = await db.sku.findUnique({ where: { code }, rejectOnNotFound: true });",
           "  const sku = await db.sku.findUniqueOrThrow({ where: { code } });")
    s.say("progress", 0.96, "Summary: Express 5.0.0 and Prisma 5.14.0 are in; tsc is clean; pnpm test passes except "
          "src/jobs/reindex.test.ts, which times out on the new Prisma connection pool — still open.")
    P = s.probe
    P("goal", "goal", "goal", "What upgrade is this session doing?", [["Express 5", "Express 5.0.0"], ["Prisma 5", "Prisma 5.14.0"]],
      accept=["Upgrading harbor-web to Express 5 and Prisma 5.", "Express 5 + Prisma 5 upgrade (on branch chore/deps-2024q2), fixing whatever breaks until pnpm test and tsc are green", "Bumping Express 4 to Express 5.0.0 and Prisma to Prisma 5.14.0"],
      reject=["Upgrading Express to 4.19.2 and regenerating the Prisma client", "An Express 5 upgrade only", "Bumping Node to 22.4"])
    P("branch", "recall", "goal", "Which branch is the work on?", ["chore/deps-2024q2"],
      accept=["chore/deps-2024q2", "The work is on branch `chore/deps-2024q2`.", "Branch chore/deps-2024q2 of harbor-web"],
      reject=["chore/deps-2024q1", "feat/deps-2024q2", "main"])
    P("migrations", "constraint", "goal", "What did the user say about prisma migrations?", [["do not regenerate", "don't regenerate", "not to regenerate", "not be regenerated", "regenerate", "regenerated", "only the client"]], regex="(?:\\b(?:not|no|never)\\b|n['’]t\\b)[^.\\n]{0,40}regenerat|only (?:regenerate )?the (?:prisma )?client",
      accept=["Do not regenerate prisma migrations — only the client.", "The user said not to regenerate the Prisma migrations; only the client may be regenerated.", "Don't regenerate migrations (client only).", "Migrations must not be regenerated; just regenerate the Prisma client."],
      reject=["Regenerate the prisma migrations after the upgrade.", "Squash the existing migrations into one before upgrading.", "Run prisma migrate dev to regenerate them for Prisma 5."])
    P("node", "update", "turn2", "Which Node version range should engines allow now?", [">=22.4"], ["stays on 20.x", "20.x or", "or 20.x", ">=20", "^20"],
      accept=[">=22.4", "engines should allow `>=22.4` now (it was Node 20.x before).", "Node >=22.4 — the user lifted the earlier 'Node stays on 20.x' rule.", "\"engines\": { \"node\": \">=22.4\" }, changed from 20.x"],
      reject=["Node stays on 20.x (no engines bump)", "20.x or >=22.4", ">=22.4 or 20.x", ">=20.x", ">=22"])
    P("ci-image", "recall", "turn2", "Which CI image should be used?", ["node:22.4-bookworm"],
      accept=["node:22.4-bookworm", "The CI image should be `node:22.4-bookworm`.", "node:22.4-bookworm (bumped together with engines >=22.4)"],
      reject=["node:22-bookworm", "node:22.4-bullseye", "node:20-bookworm"])
    P("express-old", "recall", "tree", "Which Express version was installed before the upgrade?", ["4.19.2"],
      accept=["4.19.2", "Express 4.19.2 was installed before the upgrade (now 5.0.0).", "express@4.19.2"],
      reject=["5.0.0", "4.18.2", "4.19"])
    P("err-del", "error", "err-path", "Which alias did Express 5 remove, breaking type-checking?", [["app.del()", "app.del", "router.del"]],
      accept=["`app.del()`", "Express 5 removed the app.del() alias; it has to be app.delete().", "The `app.del` alias (router.del in src/routes/orders.ts), replaced by app.delete()"],
      reject=["app.delete()", "res.sendfile()", "req.param()"])
    P("err-regex", "error", "err-regex", "What TypeError did the /inventory/:sku(\\d+) route raise?", ["Unexpected ( at 14"],
      accept=["TypeError: Unexpected ( at 14, expected END: /inventory/:sku(\\d+)", "It raised `TypeError: Unexpected ( at 14, expected END` from path-to-regexp 8.", "Unexpected ( at 14"],
      reject=["TypeError: Unexpected ( at 15, expected END", "TypeError: Missing parameter name at 14", "TypeError: Unexpected ) at 14"])
    P("decision", "decision", "decision", "How was the inline-regex route problem handled, and why not pin path-to-regexp?", ["zod", ["fragile", "transitive"]],
      accept=["The :sku param is validated with zod in the handler instead of an inline regex; pinning path-to-regexp, a transitive dependency of Express, would be fragile.", "Dropped the inline regex and validate with zod in the handler. Pinning path-to-regexp was rejected as fragile.", "zod validation in the handler — we don't pin path-to-regexp because it's a transitive dependency of Express 5"],
      reject=["Pinned path-to-regexp to 6.x so inline regex params keep working.", "Validated the param with zod in the handler because path-to-regexp 8 is slower.", "Rewrote the route to /inventory/:sku and added a custom regex middleware."])
    P("err-prisma", "error", "err-prisma", "Which unknown argument did the PrismaClientValidationError report?", ["rejectOnNotFound"],
      accept=["`rejectOnNotFound`", "Unknown argument `rejectOnNotFound` (removed in Prisma 5).", "rejectOnNotFound — replaced with findUniqueOrThrow"],
      reject=["findUniqueOrThrow", "Unknown argument `include`", "rejectOnError"])
    P("fix-prisma", "artifact", "fix-prisma", "Which file got the findUniqueOrThrow change?", ["src/services/inventory.ts"],
      accept=["src/services/inventory.ts", "The findUniqueOrThrow change went into `src/services/inventory.ts` (reserveSku).", "src/services/inventory.ts, line 88"],
      reject=["src/routes/inventory.ts", "src/services/inventory.test.ts", "src/services/orders.ts"])
    P("prisma-ver", "recall", "progress", "Which Prisma version is installed at the end?", ["5.14.0"],
      accept=["5.14.0", "Prisma 5.14.0 is installed.", "@prisma/client 5.14.0"],
      reject=["5.0.0", "5.14.1", "Prisma 5"])
    P("open", "progress", "progress", "Which test file still times out, and on what?", ["src/jobs/reindex.test.ts", "connection pool"],
      accept=["src/jobs/reindex.test.ts times out on the new Prisma connection pool.", "`src/jobs/reindex.test.ts` — it times out waiting on Prisma's new connection pool.", "src/jobs/reindex.test.ts (Prisma 5 connection pool timeout, still open)"],
      reject=["src/jobs/reindex.test.ts times out on Redis.", "src/routes/inventory.test.ts, on the connection pool", "src/jobs/reindex.ts times out on the connection pool"])
    P("next", "continuation", "progress", "What is still open?", ["reindex"],
      accept=["Investigate the src/jobs/reindex.test.ts timeout on the Prisma connection pool.", "The reindex test that still times out.", "Why reindex.test.ts hangs with Prisma 5's connection pool"],
      reject=["Replace rejectOnNotFound with findUniqueOrThrow in src/services/inventory.ts.", "Fix the app.del() calls in src/routes/orders.ts.", "Nothing: everything is green, open the PR."])
    return s


def auto_test_triage() -> Spec:
    s = Spec("auto-test-triage", "Autonomous triage of 14 failing tests after a SQLAlchemy 2 bump in ledgerline", "autonomous",
             "ledgerline", 6602, 200000, 32000,
             Layout(turns=1, steps_per_turn=(104, 104), target_chars=2_000_000, giant_outputs=10, max_out=60000, fail_rate=0.22))
    s.keep_out_of_noise("1.4.52", "should be explicitly declared as text", "'Engine' object has no attribute 'execute'", "'12.5'", "'12.50'", "quantize", "1277 passed")
    s.user("goal", 0.0, "Dependabot bumped SQLAlchemy from 1.4.52 to 2.0.30 and 14 tests fail. Triage and fix them all in "
           "one go; I'll review the PR in the morning.\n\nRules: use `uv run`; do not mark tests xfail or skip them; keep "
           "each fix in its own commit with a message starting `sa2:`; the payments API responses must not change.")
    s.tool("full", 0.04, "Full verbose run to get the whole list of failures.", "bash", {"cmd": "uv run pytest -v"},
           pytest_out(1300, [("sqlalchemy.exc.ArgumentError: Textual SQL expression 'SELECT 1' should be explicitly declared as text('SELECT 1')", "src/ledgerline/db/session.py:41: in ping\n    conn.execute(\"SELECT 1\")"),
                             ("AttributeError: 'Engine' object has no attribute 'execute'", "src/ledgerline/workers/reconcile.py:133: in reconcile_day\n    rows = engine.execute(stmt)"),
                             ("sqlalchemy.exc.InvalidRequestError: A transaction is already begun on this Session.", "src/ledgerline/invoices/service.py:208: in void_invoice\n    with session.begin():")], verbose=True), size=110000)
    s.edit("fix-text", 0.15, "First group: raw strings need text().", "src/ledgerline/db/session.py",
           "        conn.execute(\"SELECT 1\")", "        conn.execute(text(\"SELECT 1\"))")
    s.edit("fix-engine", 0.30, "Engine.execute is gone in 2.0; use a connection.", "src/ledgerline/workers/reconcile.py",
           "    rows = engine.execute(stmt)", "    with engine.connect() as conn:\n        rows = conn.execute(stmt).all()")
    s.say("decision", 0.45, "For the 'transaction is already begun' failures: the service opens session.begin() while the request "
          "dependency already started an autobegin transaction. Options: switch the dependency to autobegin=False, or use "
          "session.begin_nested() in the service. Choosing begin_nested(): it keeps the request-scoped transaction as the unit "
          "of work and doesn't change behaviour for the other 40 routes.")
    s.tool("err-decimal", 0.60, "Running the payment tests after the Session changes.", "bash", {"cmd": "uv run pytest -q tests/api/test_payments_routes.py"},
           pytest_out(90, [("AssertionError: assert {'amount': '12.5'} == {'amount': '12.50'}", "tests/api/test_payments_routes.py:144: in test_refund_response_shape\n    assert resp.json()[\"refund\"] == expected")]), size=5000)
    s.edit("fix-decimal", 0.63, "SQLAlchemy 2 returns Decimal('12.5') from Numeric(asdecimal=True) without scale; the API must still render 2 places. Quantizing in the serializer.",
           "src/ledgerline/api/routes/payments.py", "    \"amount\": str(refund.amount),", "    \"amount\": str(refund.amount.quantize(CENT)),")
    s.tool("status", 0.80, "Where are we?", "bash", {"cmd": "uv run pytest -q 2>&1 | tail -n 3"},
           "FAILED tests/workers/test_dunning.py::test_dunning_batches_by_tenant - sqlalchemy.exc.NoSuchColumnError: Could not locate column in row for column 'tenant_id'\n"
           "FAILED tests/events/test_outbox.py::test_outbox_ordering - AssertionError: assert ['e2', 'e1'] == ['e1', 'e2']\n"
           "===== 2 failed, 1277 passed, 11 skipped in 184.22s (0:03:04) =====\n[exit code 1]", size=400)
    s.say("progress", 0.97, "12 of 14 fixed. Still failing: test_dunning_batches_by_tenant (NoSuchColumnError on tenant_id, "
          "the Row is keyed by label now) and test_outbox_ordering (needs an explicit ORDER BY created_at, id). Fixing those two is next.")
    P = s.probe
    P("goal", "goal", "goal", "What did Dependabot bump, causing the failing tests the agent is triaging?", ["SQLAlchemy", "2.0.30"], ["1.4.52"],
      accept=["Dependabot bumped SQLAlchemy from 1.4.52 to 2.0.30.", "SQLAlchemy 2.0.30 (previously 1.4.52)", "sqlalchemy==2.0.30"],
      reject=["SQLAlchemy 1.4.52", "SQLAlchemy 2.0.31", "SQLAlchemy 1.4.52 or 2.0.30", "Alembic 2.0.30"])
    P("old-ver", "recall", "goal", "Which SQLAlchemy version was used before the bump?", ["1.4.52"],
      accept=["1.4.52", "SQLAlchemy 1.4.52 (before the bump to 2.0.30)", "sqlalchemy==1.4.52"],
      reject=["2.0.30", "1.4.51", "1.4"])
    P("no-xfail", "constraint", "goal", "What did the user's rules say not to mark failing tests as?", ["xfail"],
      accept=["xfail", "Not to mark them `xfail` (and not to skip them either).", "pytest.mark.xfail"],
      reject=["flaky", "slow", "expected failures via pytest.mark.skipif"])
    P("commit", "constraint", "goal", "How must each fix's commit message start?", ["sa2:"], regex="(?:^|[\\s`'\"])sa2\\b",
      accept=["`sa2:`", "With `sa2:`, one fix per commit.", "sa2: (e.g. 'sa2: wrap raw SQL in text()')", "Each commit message must start with sa2:"],
      reject=["sqlalchemy2:", "fix:", "chore(sa2):", "deps:"])
    P("api", "constraint", "goal", "Which API's responses must not change?", [["payments", "payment"]],
      accept=["The payments API.", "The payments API: its responses must not change.", "The payment API responses"],
      reject=["The invoices API", "The refunds endpoint", "The public REST API"])
    P("err-text", "error", "full", "What error did the raw 'SELECT 1' raise?", [["should be explicitly declared as text", "Textual SQL expression"]],
      accept=["sqlalchemy.exc.ArgumentError: Textual SQL expression 'SELECT 1' should be explicitly declared as text('SELECT 1')", "An ArgumentError saying the textual SQL 'SELECT 1' should be explicitly declared as text().", "ArgumentError: Textual SQL expression 'SELECT 1' must be wrapped in text()"],
      reject=["AttributeError: 'Engine' object has no attribute 'execute'", "InvalidRequestError: A transaction is already begun on this Session.", "ObjectNotExecutableError: Not an executable object: 'SELECT 1'"])
    P("err-engine", "error", "full", "Which AttributeError did the reconcile worker tests raise about the Engine object?", [["'Engine' object has no attribute 'execute'", "Engine has no attribute 'execute'"]],
      accept=["AttributeError: 'Engine' object has no attribute 'execute'", "`'Engine' object has no attribute 'execute'` (Engine.execute is gone in 2.0)", "AttributeError: Engine has no attribute 'execute'"],
      reject=["'Connection' object has no attribute 'execute'", "'Engine' object has no attribute 'begin'", "ArgumentError: Textual SQL expression 'SELECT 1' should be explicitly declared as text('SELECT 1')"])
    P("fix-engine", "artifact", "fix-engine", "Which file was changed to stop using Engine.execute?", ["src/ledgerline/workers/reconcile.py"],
      accept=["src/ledgerline/workers/reconcile.py", "`src/ledgerline/workers/reconcile.py` — reconcile_day now uses engine.connect().", "src/ledgerline/workers/reconcile.py (rows = conn.execute(stmt).all())"],
      reject=["src/ledgerline/workers/dunning.py", "src/ledgerline/db/session.py", "tests/workers/test_reconcile.py"])
    P("nested", "decision", "decision", "How were the 'transaction is already begun' failures fixed, and why that option?", ["begin_nested", ["other 40 routes", "40 routes", "40 other routes", "unit of work"]],
      accept=["With session.begin_nested() in the service instead of session.begin(); it keeps the request-scoped transaction as the unit of work and doesn't change behaviour for the other 40 routes.", "begin_nested(), because switching the dependency to autobegin=False would affect the other 40 routes.", "Used begin_nested so the request-scoped transaction stays the unit of work."],
      reject=["Switched the request dependency to autobegin=False so session.begin() works.", "begin_nested(), because it is faster.", "Wrapped the service in session.begin() and committed manually in every route."])
    P("err-decimal", "error", "err-decimal", "What did the failing amount assertion compare?", ["'12.5'", "'12.50'"],
      accept=["assert {'amount': '12.5'} == {'amount': '12.50'}", "The refund amount: got '12.5', expected '12.50'.", "12.5 vs 12.50"],
      reject=["'12.50' == '12.500'", "Decimal('12.5') == 12.5", "'12.05' == '12.50'"])
    P("fix-decimal", "error", "fix-decimal", "How was the refund amount string fixed?", [["quantize", "quantized", "quantizing"]],
      accept=["str(refund.amount.quantize(CENT)) in the payments serializer", "Quantized the amount to two places in src/ledgerline/api/routes/payments.py.", "By quantizing the Decimal to CENT before str()."],
      reject=["Changed the column to Numeric(10, 2, asdecimal=True).", "Formatted with f'{amount:.2f}'.", "round(refund.amount, 2)"])
    P("passed", "recall", "status", "How many tests passed in the run that still had 2 failed?", [["1277 passed", "1277 tests passed", "1277 tests"]],
      accept=["1277 passed", "1,277 tests passed (2 failed, 11 skipped).", "1277 passed, 2 failed, 11 skipped"],
      reject=["1285 passed", "1278 passed", "515 passed"])
    P("count", "progress", "progress", "How many of the 14 failures are fixed?", [["12 of 14", "12 of the 14", "12 out of 14", "12 out of the 14", "12/14"]], ["11 of 14", "13 of 14", "or 13", "13 or", "or 11", "11 or"],
      accept=["12 of 14", "12 of the 14 are fixed; 2 still fail.", "12/14", "12 out of 14 (last run: 2 failed, 1277 passed, 11 skipped)"],
      reject=["11 of 14", "13 of 14", "All 14", "12 or 13 of 14", "12 of 14 or 13 of 14"])
    P("left", "progress", "progress", "Which two tests are still failing?", ["test_dunning_batches_by_tenant", "test_outbox_ordering"],
      accept=["test_dunning_batches_by_tenant and test_outbox_ordering", "tests/workers/test_dunning.py::test_dunning_batches_by_tenant (NoSuchColumnError on tenant_id) and tests/events/test_outbox.py::test_outbox_ordering", "`test_outbox_ordering`, `test_dunning_batches_by_tenant`"],
      reject=["test_dunning_batches_by_tenant and test_refund_response_shape", "test_outbox_ordering and test_emit_customer_parses_timezone", "test_dunning_batches_by_tenant only"])
    P("next", "continuation", "progress", "What does the outbox ordering test still need?", [["ORDER BY created_at", "order_by(created_at"]],
      accept=["An explicit ORDER BY created_at, id on the outbox query.", "Add `ORDER BY created_at, id` so events come out as e1, e2.", "Order the outbox rows by created_at, id: .order_by(created_at, id)"],
      reject=["ORDER BY id", "Sort the events in Python after loading.", "ORDER BY updated_at"])
    return s


# =================================================================================================
# edge


def edge_manual_compaction() -> Spec:
    s = Spec("edge-manual-compaction", "Session with an earlier manual compaction block (for lookup mode)", "edge", "ledgerline",
             7701, 128000, 16384, Layout(turns=30, steps_per_turn=(2, 5), target_chars=760_000, max_out=30000),
             notes="Holds a {role: compaction, origin: manual} line at a turn boundary; lookup mode reuses it, read_write may summarise over it.")
    s.keep_out_of_noise("billing-slow", "offset-naive and offset-aware", "dunning_v2_enabled", "tzinfo=UTC")
    s.user("goal", 0.0, "We need a dunning workflow: overdue invoices get reminder emails at +7, +14 and +30 days, then the "
           "account is suspended. Build it as a Celery beat task in src/ledgerline/workers/dunning.py.")
    s.user("mail", 0.0, "Send mail through our mailer service (MAILER_URL), never SMTP directly. And reminders must be idempotent.")
    s.tool("queue", 0.08, "Which Celery queue should it run on?", "read_file", {"path": "src/ledgerline/settings.py"},
           src("src/ledgerline/settings.py", 6000, 'CELERY_TASK_ROUTES = {\n    "ledgerline.workers.dunning.*": {"queue": "billing-slow"},\n}\n'), size=6000)
    s.say("queue-said", 0.085, "CELERY_TASK_ROUTES sends ledgerline.workers.dunning.* to the billing-slow queue, so the dunning task will run there.")
    s.say("decision", 0.14, "Idempotency: each reminder gets a row in dunning_notices with a unique (invoice_id, stage) key; "
          "the task inserts first and only sends mail if the insert succeeded. That's simpler than a Redis lock and survives restarts.")
    s.tool("err", 0.22, "Tests for the first stage.", "bash", {"cmd": "uv run pytest -q tests/workers/test_dunning.py"},
           pytest_out(30, [pyfail("freezegun.api.FakeDatetime: can't compare offset-naive and offset-aware datetimes", "src/ledgerline/workers/dunning.py")]), size=2500)
    s.edit("fix", 0.24, "due_date is naive in the fixture; comparing against an aware now(). Normalising to UTC-aware.",
           "src/ledgerline/workers/dunning.py", "    overdue = now - invoice.due_date", "    overdue = now - invoice.due_date.replace(tzinfo=UTC)")
    s.user("stages-new", 0.50, "Product changed the schedule: reminders at +5, +12 and +25 days now; suspension stays after the last one.")
    s.user("flag", 0.70, "Gate the whole thing behind the feature flag dunning_v2_enabled in production.")
    s.user("suspend", 0.62, "Suspension must go through AccountService.suspend(reason='dunning'), not a direct UPDATE.")
    s.say("progress", 0.88, "Status: stages +5/+12/+25 implemented and idempotent; suspension goes through AccountService. "
          "Remaining: the email templates for stage 2 and 3 (templates/dunning/stage2.mjml, stage3.mjml).")
    s.user("next", 0.95, "Next, write those two templates; copy the tone of stage1.mjml.")
    s.manual_compaction = (0.42, "## Summary of the conversation so far (manual /compact)\n\n"
                           "**Goal**: dunning workflow for overdue invoices — reminder emails at +7, +14, +30 days, then suspension; "
                           "Celery beat task in src/ledgerline/workers/dunning.py.\n\n**Constraints**: send mail via the mailer service "
                           "(MAILER_URL), never SMTP; reminders must be idempotent.\n\n**Facts**: dunning tasks route to the Celery "
                           "queue billing-slow (src/ledgerline/settings.py).\n\n**Decisions**: idempotency via dunning_notices rows "
                           "with a unique (invoice_id, stage) key — insert first, send only if the insert succeeded (not a Redis lock).\n\n"
                           "**Errors fixed**: can't compare offset-naive and offset-aware datetimes in the stage-1 test; fixed by making "
                           "due_date UTC-aware in dunning.py.\n\n**Next**: continue with stages 2 and 3.")
    P = s.probe
    P("goal", "goal", "goal", "What workflow is being built?", [["dunning", "overdue invoice", "overdue invoices", "reminder emails"]],
      accept=["A dunning workflow: reminder emails for overdue invoices at +5/+12/+25 days, then account suspension.", "A Celery beat dunning task in src/ledgerline/workers/dunning.py.", "Reminder emails for overdue invoices, followed by suspending the account."],
      reject=["An invoice numbering service.", "Fixing tax rounding per invoice.", "Making the payment batch job faster for big tenants."])
    P("mail", "constraint", "mail", "How must mail be sent?", [["MAILER_URL", "mailer service"]],
      accept=["Through our mailer service (MAILER_URL), never SMTP directly.", "Via the mailer service at `MAILER_URL`.", "Only through the internal mailer service, not over SMTP."],
      reject=["Directly over SMTP.", "Through SendGrid's API.", "With smtplib from the Celery worker."])
    P("queue", "recall", "queue-said", "Which Celery queue do dunning tasks run on?", ["billing-slow"],
      accept=["billing-slow", "They run on the `billing-slow` queue (CELERY_TASK_ROUTES routes ledgerline.workers.dunning.* there)."],
      reject=["billing", "billing-fast", "default"])
    P("decision", "decision", "decision", "How is idempotency of reminders achieved?", [["dunning_notices"], ["invoice_id"], ["stage"]],
      accept=["Each reminder inserts a row into dunning_notices with a unique (invoice_id, stage) key; mail is sent only if the insert succeeded.", "A unique key on invoice_id + stage in the dunning_notices table, insert first then send.", "dunning_notices rows, unique on (invoice_id, stage), rather than a Redis lock."],
      reject=["A Redis lock per invoice.", "A unique (invoice_id, stage) key in a dunning_reminders table.", "dunning_notices keyed on invoice_id only."])
    P("err", "error", "err", "What datetime error did the stage-1 test raise?", [["offset-naive and offset-aware", "offset-naive", "naive and aware"]],
      accept=["can't compare offset-naive and offset-aware datetimes", "freezegun FakeDatetime: can't compare offset-naive and offset-aware datetimes.", "It couldn't compare a naive and aware datetime (offset-naive due_date vs aware now())."],
      reject=["ValueError: time data does not match format", "pytz.UnknownTimeZoneError: 'UTC+1'", "OverflowError: date value out of range"])
    P("fix-file", "artifact", "goal", "Which file holds the dunning task?", ["src/ledgerline/workers/dunning.py"],
      accept=["src/ledgerline/workers/dunning.py", "The dunning task lives in `src/ledgerline/workers/dunning.py`."],
      reject=["src/ledgerline/workers/reconcile.py", "src/ledgerline/settings.py", "src/ledgerline/workers/dunning_tasks.py"])
    P("stages", "update", "stages-new", "At which day offsets are reminders sent now?", [["+5", "5"], ["+12", "12"], ["+25", "25"]], ["+14", "+30", "14", "30", "+7"],
      accept=["+5, +12 and +25 days", "At +5/+12/+25 days (changed from +7/+14/+30).", "5, 12 and 25 days after the due date; suspension after the last."],
      reject=["+7, +14 and +30 days", "+5, +12 and +30 days", "+5, +14 and +25 days", "+7, +14, +30 or +5, +12, +25"])
    P("suspend", "constraint", "suspend", "What must suspension go through?", ["AccountService.suspend"], ["direct UPDATE"],
      accept=["Through AccountService.suspend(reason='dunning'), not a direct UPDATE.", "Call `AccountService.suspend(reason=\"dunning\")`.", "AccountService.suspend with reason dunning"],
      reject=["A direct UPDATE on accounts setting status='suspended'.", "AccountService.deactivate()", "Either AccountService.suspend or a direct UPDATE on accounts."])
    P("flag", "recall", "flag", "Which feature flag gates dunning in production?", ["dunning_v2_enabled"],
      accept=["dunning_v2_enabled", "It's gated behind the `dunning_v2_enabled` feature flag."],
      reject=["dunning_enabled", "dunning_v2", "dunning_v3_enabled"])
    P("fix-tz", "error", "fix", "How was the naive due_date fixed?", [["tzinfo=UTC", "UTC-aware"]],
      accept=["By making due_date UTC-aware: `invoice.due_date.replace(tzinfo=UTC)`.", "due_date.replace(tzinfo=UTC) before comparing with now()", "The naive due_date was normalised to UTC-aware."],
      reject=["By making now() naive with datetime.utcnow().", "By freezing time with freezegun.", "By storing due_date as a string."])
    P("left", "progress", "progress", "What is remaining?", [["stage2.mjml", "stage 2", "stage-2"], ["stage3.mjml", "stage 3", "stage-3"]],
      accept=["The stage 2 and stage 3 email templates: templates/dunning/stage2.mjml and stage3.mjml.", "templates/dunning/stage2.mjml, templates/dunning/stage3.mjml", "The stage-2 and stage-3 templates."],
      reject=["stage1.mjml", "stage1.mjml and stage2.mjml", "None; all templates are written."])
    P("next", "continuation", "next", "Which existing template's tone should the new ones copy?", [["stage1.mjml", "stage 1 template", "stage-1 template"]],
      accept=["stage1.mjml", "Copy the tone of `templates/dunning/stage1.mjml`.", "The stage 1 template."],
      reject=["stage2.mjml", "stage3.mjml", "The welcome email template."])
    return s


def edge_parallel_tools() -> Spec:
    s = Spec("edge-parallel-tools", "Parallel tool calls while adding comment threads to quillpad", "edge", "quillpad", 7702,
             128000, 16384, Layout(turns=24, steps_per_turn=(2, 4), target_chars=640_000, parallel=0.55, max_out=30000),
             notes="Many assistant messages carry 2-4 tool calls; a tail must never split a call from its result.")
    s.keep_out_of_noise("RELATIVE_POSITION_VERSION = 2", "[ 4, 12 ]", "'RelativePosition' is not assignable to type 'number'", "50 replies")
    s.user("goal", 0.0, "Add threaded comments anchored to text ranges in quillpad. Comments must survive concurrent edits, "
           "so anchor them to CRDT positions, not offsets.")
    s.user("pnpm", 0.0, "Package manager: pnpm. And keep bundle size in mind — no new runtime dependencies over 10 kB gzipped.")
    s.tools("par-read", 0.10, "Reading the anchor-related code in parallel.",
            [("read_file", {"path": "src/editor/selection.ts"}, src("src/editor/selection.ts", 5000, "")),
             ("read_file", {"path": "src/sync/crdt.ts"}, src("src/sync/crdt.ts", 6000, "export const RELATIVE_POSITION_VERSION = 2;\n")),
             ("grep", {"pattern": "createRelativePosition", "path": "src"}, grep("createRelativePosition", 30, ["src/sync/crdt.ts:214:export function createRelativePosition(type: YText, index: number, assoc = -1) {"]))],
            plant=1, size=13000)
    s.say("decision", 0.2, "Anchors will be stored as relative positions (createRelativePosition with assoc -1 for the start and "
          "+1 for the end) so inserts at either boundary stay outside the comment.")
    s.tools("par-err", 0.35, "Running unit tests and type-check side by side.",
            [("bash", {"cmd": "pnpm vitest run src/editor"}, vitest_out(4, [("AssertionError: expected [ 4, 9 ] to deeply equal [ 4, 12 ]", " ❯ src/editor/commands.test.ts:201:33 comment range grows with inner insert")])),
             ("bash", {"cmd": "pnpm tsc --noEmit"}, lambda ctx: C.tsc_output(ctx.rng, ctx.world, 2, ["src/components/CommentThread.tsx(18,7): error TS2322: Type 'RelativePosition' is not assignable to type 'number'."]) + "\n[exit code 2]")],
            plant=0, size=4000)
    s.user("limit", 0.45, "Product says threads are capped at 50 replies.")
    s.user("limit-new", 0.70, "Correction from product: the reply cap is 250 — enterprise customers complained about the old cap.")
    s.write("thread", 0.55, "Creating the comment store.", "src/store/comments.ts", 2500, "export const MAX_REPLIES = 250;\n")
    s.say("progress", 0.88, "Status: anchors use relative positions, CommentThread renders, store enforces the reply cap. "
          "Remaining: resolving/unresolving threads and the awareness indicator.")
    P = s.probe
    P("deps", "constraint", "pnpm", "What size limit applies to new runtime dependencies?", [["10 kB", "10kB"]],
      accept=["No new runtime dependency over 10 kB gzipped.", "10 kB gzipped", "Runtime deps must stay under 10kB gzipped."],
      reject=["100 kB gzipped", "10 MB", "1 kB"])
    P("rel-version", "recall", "par-read", "What is RELATIVE_POSITION_VERSION set to?", [["2"]], ["1", "3"],
      accept=["2", "`RELATIVE_POSITION_VERSION = 2` (src/sync/crdt.ts)", "It is set to 2."],
      reject=["1", "3", "1 or 2", "RELATIVE_POSITION_VERSION = 12"])
    P("assoc", "decision", "decision", "Which assoc values are used for the start and end anchors?", [["-1"]], regex="(start[^\\n]{0,40}?(?<![+\\d])-1\\b[\\s\\S]{0,100}?end[^\\n]{0,40}?(?<![-\\d])\\+?1\\b)|((?<![+\\d])-1\\b[^\\n]{0,30}?start[\\s\\S]{0,100}?(?<![-\\d])\\+1\\b[^\\n]{0,30}?end)",
      accept=["assoc -1 for the start anchor and +1 for the end.", "start: -1, end: +1", "Start uses assoc = -1, end uses assoc = 1.", "-1 (start) and +1 (end)"],
      reject=["+1 for the start and -1 for the end.", "0 for both anchors.", "-1 for both the start and the end."])
    P("err-range", "error", "par-err", "What did the comment range test expect to deeply equal?", [["[ 4, 12 ]", "[4, 12]", "[4,12]", "[ 4,12 ]", "[4 ,12]"]],
      accept=["AssertionError: expected [ 4, 9 ] to deeply equal [ 4, 12 ]", "It expected the range [4, 12] (it got [4, 9]).", "[4,12]"],
      reject=["[ 4, 9 ]", "[ 4, 11 ]", "[ 5, 12 ]", "[14, 12]"])
    P("err-tsc", "error", "par-err#1", "Which type error did tsc report in CommentThread.tsx?", ["'RelativePosition' is not assignable to type 'number'"],
      accept=["TS2322: Type 'RelativePosition' is not assignable to type 'number'.", "Type `RelativePosition` is not assignable to type `number` (line 18).", "src/components/CommentThread.tsx(18,7): error TS2322: Type \"RelativePosition\" is not assignable to type \"number\""],
      reject=["Parameter 'expiresAt' implicitly has an 'any' type.", "Type 'number' is not assignable to type 'RelativePosition'.", "Parameter 'label' implicitly has an 'any' type."])
    P("limit", "update", "limit-new", "What is the reply cap now? Number only.", ["250"], ["50"],
      accept=["250", "250 replies (up from 50)", "250; the old cap was 50."],
      reject=["50", "50 or 250", "500", "25"])
    P("store", "artifact", "thread", "Which new file is the comment store?", ["src/store/comments.ts"],
      accept=["src/store/comments.ts", "The new comment store is `src/store/comments.ts`."],
      reject=["src/store/history.ts", "src/store/comment.ts", "src/components/CommentThread.tsx"])
    P("tsx", "artifact", "par-err#1", "Which component file had the type error?", ["src/components/CommentThread.tsx"],
      accept=["src/components/CommentThread.tsx", "`src/components/CommentThread.tsx` (line 18)."],
      reject=["src/components/Editor.tsx", "src/components/CommentThread.ts", "src/store/comments.ts"])
    P("pm", "constraint", "pnpm", "Which package manager must be used?", ["pnpm"], ["npm", "yarn"],
      accept=["pnpm", "Use pnpm (not npm or yarn).", "`pnpm`"],
      reject=["npm", "yarn", "npm or pnpm"])
    P("left", "progress", "progress", "What remains?", [["resolving", "resolve", "unresolving", "unresolve", "resolved"], ["awareness"]],
      accept=["Resolving/unresolving threads and the awareness indicator.", "Thread resolve/unresolve, plus the awareness indicator.", "Still to do: resolving threads; awareness indicator."],
      reject=["Only the awareness indicator.", "Resolving threads.", "Nothing, everything is done.", "Enforcing the reply cap in the store."])
    P("next", "continuation", "progress", "What is remaining?", [["resolving", "unresolving", "resolve", "unresolve"]],
      accept=["Resolving/unresolving threads.", "Thread resolve/unresolve support.", "Let users resolve and unresolve comment threads."],
      reject=["The awareness indicator.", "Enforcing the reply cap in the store.", "Rendering CommentThread."])
    return s


def edge_superseded_facts() -> Spec:
    s = Spec("edge-superseded-facts", "Facts that change twice while wiring cinder's retry policy", "edge", "cinder", 7703,
             128000, 16384, Layout(turns=26, steps_per_turn=(2, 5), target_chars=620_000, max_out=28000),
             notes="The per-attempt timeout changes twice (4500 -> 9000 -> 7500 ms) and the deploy target once; only the latest values are right.")
    s.keep_out_of_noise("7500", "4500", "9000", "kw-prod-fra2", "kw-prod-ams", "cap not applied", "apply it last", "cap was applied before jitter", "invoices-export")
    s.user("goal", 0.0, "Give cinder a per-queue retry policy: max attempts and exponential backoff configured in "
           "deploy/cinder.yaml, used by internal/retry/backoff.go.")
    s.user("attempts-1", 0.05, "Default per-attempt timeout: 4500 ms.")
    s.user("cluster-1", 0.10, "We'll deploy to the kw-prod-ams cluster when it's done.")
    s.tool("err", 0.25, "Running the retry tests.", "bash", {"cmd": "go test ./internal/retry/ -v"},
           gotest_out([("internal/retry", "    backoff_test.go:48: next(4) = 12.8s, want <= 10s (cap not applied)")], verbose=True), size=3000)
    s.edit("fix", 0.27, "The cap was applied before jitter was added; apply it last.", "internal/retry/backoff.go",
           "\td := min(base<<attempt, max)\n\treturn d + jitter(d)", "\td := base<<attempt + jitter(base<<attempt)\n\treturn min(d, max)")
    s.user("retrycount", 0.30, "Keep the old `RetryCount` field readable for one release and mark it deprecated in the docs.")
    s.user("attempts-2", 0.40, "Let's raise the per-attempt timeout to 9000 ms, slow upstreams are killing us.")
    s.say("decision", 0.48, "Per-queue overrides go under `queues.<name>.retry` in deploy/cinder.yaml; I'm not adding "
          "per-job overrides — nobody asked for them and they'd need a schema change.")
    s.user("override", 0.55, "First per-queue override: queue invoices-export gets max 12 attempts.")
    s.user("cluster-2", 0.60, "Deploy target changed: kw-prod-ams is being drained, use kw-prod-fra2 instead.")
    s.user("attempts-3", 0.72, "Final answer after the incident review: the per-attempt timeout is 7500 ms. Sorry for the back and forth.")
    s.say("progress", 0.9, "Done: backoff cap fixed, per-queue retry config, per-attempt timeout from config. Remaining: the "
          "changelog entry and the deploy.")
    P = s.probe
    P("goal", "goal", "goal", "What is being added to cinder?", [["retry policy", "retry policies", "retries", "retry config", "retry configuration", "retry settings"]],
      accept=["A per-queue retry policy: max attempts and exponential backoff configured in deploy/cinder.yaml, used by internal/retry/backoff.go.", "Per-queue retries (max attempts plus exponential backoff).", "Retry configuration per queue."],
      reject=["A dead-letter queue for failed jobs.", "A per-attempt timeout of 7500 ms.", "Exponential backoff for cron schedules."])
    P("timeout", "update", "attempts-3", "What is the per-attempt timeout now, in ms? Number only.", [["7500", "7500ms"]], ["4500", "9000", "4500ms", "9000ms"], rubric="Only 7500 is correct; 4500 and 9000 were superseded.",
      accept=["7500", "7,500 ms (it went 4500 -> 9000 -> 7500)", "7500ms; the earlier 4500 and 9000 were superseded.", "7500, not 9000"],
      reject=["9000", "4500", "9000 or 7500", "7000", "9000ms"])
    P("cluster", "update", "cluster-2", "Which cluster is the deploy target now?", ["kw-prod-fra2"], ["kw-prod-ams or", "or kw-prod-ams", "kw-prod-ams and", "and kw-prod-ams", "target is kw-prod-ams", "target: kw-prod-ams", "deploy to kw-prod-ams", "deploying to kw-prod-ams", "deployment to kw-prod-ams", "still kw-prod-ams"],
      accept=["kw-prod-fra2", "kw-prod-fra2 (kw-prod-ams is being drained).", "Deploy to `kw-prod-fra2` instead of kw-prod-ams.", "kw-prod-fra2; it was kw-prod-ams before."],
      reject=["kw-prod-ams", "kw-prod-ams or kw-prod-fra2", "kw-prod-fra1", "Both kw-prod-fra2 and kw-prod-ams."])
    P("err", "error", "err", "What did backoff_test.go:48 report?", [["cap not applied", "cap wasn't applied", "cap was not applied", "12.8s"]],
      accept=["backoff_test.go:48: next(4) = 12.8s, want <= 10s (cap not applied)", "next(4) returned 12.8s, above the 10s max: the cap wasn't applied.", "The backoff cap was not applied (12.8s vs a 10s cap)."],
      reject=["next(3) = 6.4s, want <= 5s (jitter too large)", "context deadline exceeded", "TestLoadSchedule_HandlesEmpty timed out"])
    P("fix", "error", "fix", "When must the backoff cap be applied?", [["apply it last", "cap was applied before jitter", "applied last", "apply the cap last", "after adding jitter", "after the jitter", "after jitter"]],
      accept=["The cap was applied before jitter was added; now it is applied last.", "Apply the cap after adding jitter (min(...) last).", "Moved the cap to after the jitter so it is applied last."],
      reject=["Apply the cap before adding jitter.", "Removed the jitter entirely.", "Raised the cap to 12.8s."])
    P("file", "artifact", "fix", "Which file implements the backoff?", ["internal/retry/backoff.go"],
      accept=["internal/retry/backoff.go", "`internal/retry/backoff.go` (the cap is now applied last)."],
      reject=["internal/retry/backoff_test.go", "internal/retry/policy.go", "internal/queue/lease.go"])
    P("decision", "decision", "decision", "Where do per-queue overrides go, and why no per-job overrides?", [["queues.<name>.retry", "queues.<queue>.retry"], ["schema change", "schema changes", "change the schema", "changing the schema", "change to the schema"]],
      accept=["Under `queues.<name>.retry` in deploy/cinder.yaml; no per-job overrides because nobody asked for them and they'd need a schema change.", "queues.<name>.retry; per-job overrides would require a schema change.", "In deploy/cinder.yaml under queues.<name>.retry. Per-job ones would mean changing the schema, and nobody asked."],
      reject=["Under jobs.<name>.retry; per-job overrides are supported as well.", "Under retry.queues in deploy/cinder.yaml; no per-job overrides for performance reasons.", "queues.<name>.retry; per-job overrides were rejected because they slow down the scheduler."])
    P("retrycount", "constraint", "retrycount", "What must happen to the old RetryCount field?", [["deprecated", "deprecate", "deprecation", "deprecating"]],
      accept=["Keep it readable for one release and mark it deprecated in the docs.", "RetryCount stays working for one more release, documented as deprecated.", "Deprecate it in the docs but keep reading it for a release."],
      reject=["Remove it now.", "Rename it to MaxAttempts.", "Keep it forever, undocumented."])
    P("override", "recall", "override", "Which queue gets the first per-queue override, with how many attempts?", ["invoices-export", ["12", "twelve"]],
      accept=["invoices-export, max 12 attempts.", "Queue `invoices-export` gets 12 attempts.", "invoices-export with twelve attempts"],
      reject=["invoices-export, 10 attempts", "invoices-import, 12 attempts", "billing-export, max 12 attempts"])
    P("left", "progress", "progress", "What remains?", ["changelog"],
      accept=["The changelog entry and the deploy.", "A CHANGELOG entry, then deploying to kw-prod-fra2.", "changelog + deploy"],
      reject=["Only the deploy to kw-prod-fra2.", "Nothing, it's all done.", "Fixing the backoff cap."])
    P("next", "continuation", "progress", "What comes after the changelog entry?", [["deploy", "deploying", "deployment"]], ["kw-prod-ams or", "or kw-prod-ams", "kw-prod-ams and", "and kw-prod-ams", "target is kw-prod-ams", "target: kw-prod-ams", "deploy to kw-prod-ams", "deploying to kw-prod-ams", "deployment to kw-prod-ams", "still kw-prod-ams"],
      accept=["The deploy, to kw-prod-fra2.", "Deploying to kw-prod-fra2 (kw-prod-ams is being drained).", "Deployment to kw-prod-fra2."],
      reject=["Deploy to kw-prod-ams.", "Writing the changelog entry.", "Raising the timeout to 9000 ms."])
    return s


def edge_giant_step() -> Spec:
    s = Spec("edge-giant-step", "A single tool step larger than the 16384-token tail cap", "edge", "tollgate", 7704,
             128000, 16384, Layout(turns=14, steps_per_turn=(2, 5), target_chars=505_000, max_out=26000),
             notes="Two steps whose tool output alone is ~30K tokens; when the tail falls back to one step it still exceeds the cap.")
    s.keep_out_of_noise("server closed idle connection", "3500", "5000 ms", "edge-gw-prod", "orders-v2")
    s.user("goal", 0.0, "Tollgate returns 502s under load to the orders backend. Find out whether it's our proxy or the upstream.")
    s.user("prod", 0.0, "You may read production logs but do not restart anything in production.")
    s.tool("giant-1", 0.35, "Pulling the full gateway log for the incident window.", "bash",
           {"cmd": "kubectl logs deploy/tollgate -n edge-gw-prod --since=2h"},
           logs(1100, ["2024-06-20T14:02:11.774Z ERROR [http] req=f00dfeed1234 upstream orders-v2: http: server closed idle connection (keepalive race)"]), size=125000)
    s.say("decision", 0.45, "The 502s line up with upstream idle connections closed by orders-v2 after 5000 ms while our pool keeps "
          "them for 90s. Fix: set IdleConnTimeout to 4s in internal/upstream/pool.go, below the upstream's keepalive.")
    s.edit("fix", 0.5, "Lowering the idle timeout.", "internal/upstream/pool.go", "\t\tIdleConnTimeout: 90 * time.Second,",
           "\t\tIdleConnTimeout: 4 * time.Second,")
    s.user("keepalive", 0.6, "orders-v2 team says their keepalive is actually 3500 ms in the new release, so IdleConnTimeout at 4s is too long.")
    s.tool("giant-2", 0.999, "Verifying with a second full log after the change.", "bash",
           {"cmd": "kubectl logs deploy/tollgate -n edge-gw-prod --since=30m"},
           logs(1050, ["2024-06-20T16:40:02.118Z INFO  [http] req=0ddba11c0ffe ns=edge-gw-prod 502 count last 30m: 0 (was 412)"]), size=120000)
    s.say("giant-3", 0.9995, "The log after the change shows the 502 count for the last 30m at 0 (was 412).")
    P = s.probe
    P("goal", "goal", "goal", "What is being investigated?", [["502", "502s"]],
      accept=["Why tollgate returns 502s under load to the orders backend: our proxy or the upstream?", "The 502 errors under load; whether it's the proxy or orders-v2.", "Bad Gateway (HTTP 502) responses to the orders backend."],
      reject=["504 timeouts from the orders backend.", "Why RefreshKey returns stale data after an update.", "Flaky route tests on CI."])
    P("prod", "constraint", "prod", "What is forbidden in production?", [["restart", "restarting", "restarts", "restarted"]],
      accept=["Restarting anything in production (reading prod logs is allowed).", "Do not restart anything in production.", "Any restart in prod."],
      reject=["Reading production logs.", "Deploying to production on Fridays.", "kubectl exec into production pods."])
    P("err", "error", "giant-1", "Which upstream error from orders-v2 did the logs show?", [["server closed idle connection", "closed idle connection", "closed idle connections"]],
      accept=["http: server closed idle connection (keepalive race)", "upstream orders-v2: http: server closed idle connection", "orders-v2 closed idle connections (a keepalive race)."],
      reject=["context deadline exceeded", "connection refused", "unexpected EOF"])
    P("decision", "decision", "decision", "What fix was chosen for the 502s?", ["IdleConnTimeout"],
      accept=["Lower the pool's IdleConnTimeout from 90s to 4s, below the upstream's keepalive.", "Set IdleConnTimeout to 4s in internal/upstream/pool.go.", "`IdleConnTimeout: 4 * time.Second`"],
      reject=["Retry failed requests on 502.", "Ask orders-v2 to raise their keepalive.", "Disable HTTP keepalives entirely."])
    P("file", "artifact", "fix", "Which file's error handling did the user ask to tidy, and the agent edit?", ["internal/upstream/pool.go"],
      accept=["internal/upstream/pool.go", "The user asked to tidy `internal/upstream/pool.go`, and the agent edited it (IdleConnTimeout)."],
      reject=["internal/upstream/health.go", "internal/proxy/handler.go", "internal/ratelimit/redis_store.go"])
    P("keepalive", "update", "keepalive", "What is orders-v2's keepalive now?", [["3500", "3500ms", "3.5 s", "3.5s", "3.5 seconds"]], ["5000", "5000ms", "5 s", "5s", "5 seconds"],
      accept=["3500 ms", "3,500 ms (it used to be 5000 ms).", "3.5 s in the new release", "3500ms, not 5000ms"],
      reject=["5000 ms", "3500ms or 5000ms", "5s", "4s"])
    P("ns", "recall", "giant-2", "Which namespace did kubectl read the tollgate logs from?", ["edge-gw-prod"],
      accept=["edge-gw-prod", "tollgate runs in the `edge-gw-prod` namespace."],
      reject=["edge-gw-staging", "edge-gw", "tollgate-prod"])
    P("upstream", "recall", "decision", "Which upstream service was closing idle connections?", ["orders-v2"],
      accept=["orders-v2", "The orders backend, `orders-v2`."],
      reject=["orders-v1", "the orders backend", "tollgate"])
    P("why-4s", "decision", "decision", "Why was IdleConnTimeout set to 4s?", [["keepalive", "keep-alive", "keep alive", "5000 ms", "5000ms", "5 s", "5s", "closes idle", "closed idle", "closing idle"]],
      accept=["To stay below orders-v2's keepalive (5000 ms), so the pool drops idle connections before the upstream closes them.", "Because 4s is under the upstream's 5 s keep-alive.", "orders-v2 closes idle connections after 5000 ms, so our pool must drop them first."],
      reject=["Because 4s is the Go default idle timeout.", "To match the 4s request timeout.", "Because 90s was too short."])
    P("verify", "progress", "giant-3", "How many 502s did the log after the change show for the 30 minutes?", [["0", "zero"]], ["412"],
      accept=["0 (was 412)", "Zero 502s in the last 30 minutes, down from 412.", "0; previously 412."],
      reject=["412", "412 (was 0)", "4"])
    P("next", "continuation", "keepalive", "Given the new upstream keepalive, which setting must be lowered next?", [["IdleConnTimeout", "idle connection timeout", "idle conn timeout"]],
      accept=["IdleConnTimeout: 4s is now longer than the 3500 ms keepalive, so it must go below 3.5 s.", "The pool's IdleConnTimeout in internal/upstream/pool.go.", "The idle connection timeout."],
      reject=["The upstream keepalive.", "MaxIdleConns", "ResponseHeaderTimeout"])
    return s


CASES = [
    desktop_tax_rounding, desktop_rate_limit_header, desktop_go_env_config, desktop_cli_dry_run,
    long_auth_refactor, long_billing_migration, long_gateway_ratelimit, long_pipeline_backfill, long_editor_sync,
    auto_flaky_scheduler, auto_dependency_upgrade, auto_test_triage,
    edge_32k_window, edge_manual_compaction, edge_parallel_tools, edge_superseded_facts, edge_giant_step,
]
