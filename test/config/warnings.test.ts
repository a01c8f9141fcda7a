import { describe, expect, test } from "bun:test";
import { parseConfigText } from "../../src/config/load.ts";
import { starterConfig } from "../../src/cli/starter.ts";
import { configWarnings } from "../../src/config/warnings.ts";

const EMPTY_IPS =
  "outbound.sending_ips: is empty, so no SPF record is offered for sending domains and none can be verified; set it to this host's public addresses";

describe("configWarnings", () => {
  const cases: [string, string, string[]][] = [
    ["sending_ips set: nothing to say", `[outbound]\nsending_ips = ["203.0.113.7"]`, []],
    ["sending_ips = [] as `postroom init` writes it", `[outbound]\nsending_ips = []`, [EMPTY_IPS]],
    ["sending_ips left out (the default is [])", ``, [EMPTY_IPS]],
    [
      "with a smarthost, the addresses to authorise are the smarthost's",
      `[outbound]\nsmarthost = "smtp://relay.example.net:587"`,
      [
        "outbound.sending_ips: is empty, so no SPF record is offered for sending domains and none can be verified; set it to the addresses outbound.smarthost sends from",
      ],
    ],
  ];
  for (const [why, toml, expected] of cases) {
    test(why, () => {
      const parsed = parseConfigText(`hostname = "mx.example.com"\n${toml}`);
      if (!parsed.ok) throw new Error(parsed.problems.join("\n"));
      expect(configWarnings(parsed.config)).toEqual(expected);
    });
  }

  test("the config `postroom init` writes gets the warning", () => {
    const parsed = parseConfigText(starterConfig("mx.example.com").text);
    if (!parsed.ok) throw new Error(parsed.problems.join("\n"));
    expect(configWarnings(parsed.config)).toEqual([EMPTY_IPS]);
  });
});
