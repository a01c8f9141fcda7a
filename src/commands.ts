// The command line: serve, check-config, secret, init, migrate, tls status, queue, version.
// Exit codes (docs/operations.md): 0 ok, 1 bad config or input, 2 runtime failure.
// Loaded by main.ts once the engine's options are settled.
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { App } from "./app.ts";
import { hashSecret, mintSecret } from "./auth/secrets.ts";
import { parseCommandLine } from "./cli/command-line.ts";
import { runMigrate } from "./cli/migrate.ts";
import { runQueueCommand } from "./cli/queue-client.ts";
import { parseQueueCommand } from "./cli/queue-command.ts";
import { secretText } from "./cli/secret.ts";
import { describeAccessError } from "./config/files.ts";
import { loadConfigFile } from "./config/load.ts";
import { configWarnings } from "./config/warnings.ts";
import { starterConfig, starterNextSteps } from "./cli/starter.ts";
import { createLogger, setStdoutFlushInterval } from "./lib/logger.ts";
import { tlsStatusCommand } from "./tls/status-command.ts";
import { VERSION } from "./version.ts";
import { changedKeys } from "./config/changed-keys.ts";

const out = (s: string) => process.stdout.write(s.endsWith("\n") ? s : s + "\n");
const err = (s: string) => process.stderr.write(s.endsWith("\n") ? s : s + "\n");

function configPath(flag: string | undefined): string {
  return flag ?? process.env.POSTROOM_CONFIG ?? "postroom.toml";
}

async function loadOrExit(path: string) {
  return (await loadedOrExit(path)).config;
}

/** The config and the file as read (a reload compares the latter: changed-keys.ts). */
async function loadedOrExit(path: string) {
  const result = await loadConfigFile(path);
  if (!result.ok) {
    err(`${path}: ${result.problems.length} problem${result.problems.length === 1 ? "" : "s"}:`);
    for (const p of result.problems) err(`  ${p}`);
    process.exit(1);
  }
  return result;
}

async function serve(path: string): Promise<void> {
  const loaded = await loadedOrExit(path);
  const { config } = loaded;
  // What the running config was read from: a reload names the keys that changed since.
  let runningRaw = loaded.raw;
  setStdoutFlushInterval(config.log.flushIntervalMs);
  const logger = createLogger({ level: config.log.level });
  for (const warning of configWarnings(config)) logger.warn("config warning", { warning });
  let app: App;
  try {
    app = await App.start({ config, logger });
  } catch (e) {
    logger.error("postroom failed to start", { err: e, config: path });
    process.exit(2);
  }
  process.on("SIGHUP", async () => {
    const next = await loadConfigFile(path);
    if (!next.ok) {
      logger.error("config reload refused; keeping the running config", { config: path, problems: next.problems });
      return;
    }
    const changed = changedKeys(runningRaw, next.raw);
    runningRaw = next.raw;
    app.reload(next.config, changed);
  });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info("stopping", { signal });
    await app.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  // A rejection nobody handled or an exception nobody caught is a bug: some operation
  // failed and no code decided what that means (an outcome believed recorded that was not).
  // Logged with its stack, then the process ends (exit 2) and its supervisor starts it
  // afresh: leases hand its work over, and nothing accepted is lost, since a 202/250 is
  // given only after its commit. A store going away is not such a bug: every job and worker
  // handles its own failed queries (test/e2e/pg-outage.test.ts).
  const fatal = (what: string) => (err: unknown) => {
    logger.error(what, { err });
    process.exit(2);
  };
  process.on("unhandledRejection", fatal("unhandled rejection (a bug: please report it)"));
  process.on("uncaughtException", fatal("uncaught exception (a bug: please report it)"));
}

async function main(argv: string[]): Promise<void> {
  const line = parseCommandLine(argv);
  switch (line.kind) {
    case "help":
      out(line.text);
      return process.exit(line.exitCode);
    case "version":
      out(`postroom ${VERSION}`);
      return;
    case "queue": {
      const outcome = await runQueueCommand(parseQueueCommand(line.argv), process.env, queueConfig);
      for (const text of outcome.stdout) out(text);
      for (const text of outcome.stderr) err(text);
      return process.exit(outcome.exitCode);
    }
    case "error":
      err(`${line.message}\n\n${line.usage}`);
      process.exit(1);
  }
  const path = configPath(line.config);
  switch (line.command) {
    case "serve":
      return serve(path);
    case "check-config": {
      const config = await loadOrExit(path);
      const warnings = configWarnings(config);
      for (const w of warnings) err(`warning: ${w}`);
      out(
        `${path}: ok (${config.accounts.length} account${config.accounts.length === 1 ? "" : "s"}${warnings.length ? `, ${warnings.length} warning${warnings.length === 1 ? "" : "s"}` : ""})`,
      );
      return;
    }
    case "secret": {
      const secret = mintSecret();
      out(secretText(secret, hashSecret(secret)));
      return;
    }
    case "init":
      return init(path, line.force);
    case "migrate": {
      const outcome = await runMigrate(await loadOrExit(path));
      for (const line of outcome.stdout) out(line);
      for (const line of outcome.stderr) err(line);
      if (outcome.exitCode !== 0) process.exit(outcome.exitCode);
      return;
    }
    case "tls": {
      const config = await loadOrExit(path);
      const status = await tlsStatusCommand(config, Date.now());
      out(status.text);
      if (!status.ok) process.exit(1);
      return;
    }
    case "version":
      out(`postroom ${VERSION}`);
      return;
  }
}

/** The config `postroom queue` reads its default --url from, or what is wrong with it. */
async function queueConfig(flag: string | undefined) {
  const path = configPath(flag);
  const result = await loadConfigFile(path);
  return result.ok ? result.config : `${path}: ${result.problems[0] ?? "cannot be read"}`;
}

const STARTER_HOSTNAME = "mx.example.com";

/** The starter config, readable by the service's group and no one else (it names webhook secrets). */
async function init(path: string, force: boolean): Promise<void> {
  if (existsSync(path) && !force) {
    err(`${path} already exists; use --force to overwrite it`);
    process.exit(1);
  }
  const starter = starterConfig(STARTER_HOSTNAME);
  try {
    writeFileSync(path, starter.text, { mode: 0o640 });
    chmodSync(path, 0o640);
  } catch (e) {
    err(`${path}: ${describeAccessError(e as NodeJS.ErrnoException)}`);
    process.exit(1);
  }
  out(starterNextSteps(path, STARTER_HOSTNAME));
  out(`account ID:       ${starter.accountId}`);
  out(`API token:        ${starter.apiToken}   (shown once)`);
  out(`SMTP username:    ${starter.outboundId}`);
  out(`SMTP password:    ${starter.smtpPassword}   (shown once)`);
}

await main(Bun.argv.slice(2));
