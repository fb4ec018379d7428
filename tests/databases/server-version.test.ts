import { describe, expect, it } from "vitest";
import { unsupportedServerReason } from "../../server/database/server-version";

/* Issue 26 item 2: PostgreSQL 14 to 18; `npm start` refuses an older server with a message naming its version (the real PostgreSQL 15 passes: conformance.test.ts). */

describe("the start's server version check", () => {
  it("refuses PostgreSQL 13 and older, naming the version", () => {
    expect(unsupportedServerReason({ number: 130_011, text: "13.11 (Debian 13.11-0+deb11u1)" })).toBe(
      "PostgreSQL 13.11 (Debian 13.11-0+deb11u1) is not supported: Work Graph needs PostgreSQL 14 or newer (14 to 18 are tested)",
    );
    expect(unsupportedServerReason({ number: 90_624, text: "9.6.24" })).toMatch(/^PostgreSQL 9\.6\.24 is not supported/);
  });

  it("accepts 14 to 18 (and newer)", () => {
    for (const number of [140_000, 150_020, 160_004, 170_002, 180_004, 190_000]) expect(unsupportedServerReason({ number, text: String(number) })).toBeNull();
  });
});
