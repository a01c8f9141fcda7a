// The JavaScript engine's options for `postroom serve`. JavaScriptCore reads its options
// (the BUN_JSC_* variables) once, as the process starts, so `serve` executes itself again
// in place with them set (execve: the same PID, the one systemd and the pid file know)
// before any other module runs. main.ts imports this file first.
//
// The one option: no FTL, JavaScriptCore's fourth and last tier. Postroom's JavaScript is
// glue around native work (TLS, SQLite, hashing and signatures, sockets), and the FTL
// compiles that glue again at great cost: after a start its compiler threads took 350-385
// µs of CPU per message sent, beside 765-975 on the main thread, on two cores the main
// thread needs (bench:outbound --start cold). Without it they took 155-175 and the main
// thread no more; warm, outbound was no slower and inbound cost about 5% more CPU, inside
// its runs' spread (bench/RESULTS.md, issue 38). An operator who sets BUN_JSC_useFTLJIT
// (to 1, say) keeps their choice: nothing is executed again.

/** The engine's options `serve` runs with, unless the environment sets them already. */
export const ENGINE_OPTIONS: Readonly<Record<string, string>> = { BUN_JSC_useFTLJIT: "0" };

export interface ProcessShape {
  /** process.argv: [runtime, script, ...arguments]; a compiled binary's script is in /$bunfs/. */
  argv: readonly string[];
  execArgv: readonly string[];
  execPath: string;
  argv0: string;
  env: Readonly<Record<string, string | undefined>>;
}

/** The execve that starts `serve` again with ENGINE_OPTIONS, or null: another command, or the options are set. */
export function engineRestart(p: ProcessShape): { path: string; args: string[]; env: Record<string, string> } | null {
  if (p.argv[2] !== "serve") return null;
  if (Object.keys(ENGINE_OPTIONS).some((name) => p.env[name] !== undefined)) return null;
  const compiled = p.argv[1]?.startsWith("/$bunfs/") ?? false;
  // A compiled binary is its own script; `bun src/main.ts` needs the runtime's flags and the script again.
  const args = compiled ? [p.execPath, ...p.argv.slice(2)] : [p.argv0, ...p.execArgv, ...p.argv.slice(1)];
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(p.env)) if (value !== undefined) env[name] = value;
  return { path: p.execPath, args, env: { ...env, ...ENGINE_OPTIONS } };
}

const restart = engineRestart(process);
if (restart) {
  try {
    process.execve?.(restart.path, restart.args, restart.env);
  } catch {
    // Not executable again (no execve, or a sandbox refuses it): serve with the engine's defaults.
  }
}
