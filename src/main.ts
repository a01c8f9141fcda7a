#!/usr/bin/env bun
// The executable's entry. First the engine's options: `serve` may execute itself again with
// them (engine-options.ts). Only then the commands (commands.ts), loaded by a dynamic import
// so that a process about to be replaced has not loaded them for nothing.
import "./engine-options.ts";

await import("./commands.ts");
