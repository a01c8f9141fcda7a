// bench:memory's options (bench/memory.ts's header says what each one does): flags, else
// BENCH_* variables, else the defaults.
import { intOption, parseOptions } from "./args.ts";

export type MemoryOptions = ReturnType<typeof memoryOptions>;

export function memoryOptions() {
  const values = parseOptions(
    "bun run bench:memory [--budget SIZE] [--raised SIZE] [--inbound N] [--inbound-size SIZE] [--api N] [--api-size SIZE] [--submission N] [--format json+n|multipart+n] [--phases inbound,api,submission,hostage,senders,controls]",
    {
      budget: { type: "string" },
      raised: { type: "string" },
      inbound: { type: "string" },
      "inbound-size": { type: "string" },
      api: { type: "string" },
      "api-size": { type: "string" },
      submission: { type: "string" },
      format: { type: "string" },
      phases: { type: "string" },
    },
  );
  const text = (flag: string | undefined, env: string, dflt: string) => flag ?? process.env[env] ?? dflt;
  const format = text(values.format, "BENCH_FORMAT", "json+n");
  if (format !== "json+n" && format !== "multipart+n") throw new Error(`--format must be json+n or multipart+n, got ${format}`);
  const phases = text(values.phases, "BENCH_PHASES", "inbound,api,hostage,senders,controls").split(",");
  return {
    budget: text(values.budget, "BENCH_BUDGET", "256MB"),
    raised: text(values.raised, "BENCH_RAISED", "8GB"),
    inbound: intOption(values.inbound, "BENCH_INBOUND", 50, 0),
    inboundSize: text(values["inbound-size"], "BENCH_INBOUND_SIZE", "25MB"),
    api: intOption(values.api, "BENCH_API", 50, 0),
    apiSize: text(values["api-size"], "BENCH_API_SIZE", "10MB"),
    submission: intOption(values.submission, "BENCH_SUBMISSION", 50, 0),
    format,
    phases: {
      inbound: phases.includes("inbound"),
      api: phases.includes("api"),
      submission: phases.includes("submission"),
      hostage: phases.includes("hostage"),
      senders: phases.includes("senders"),
      controls: phases.includes("controls"),
    },
  };
}
