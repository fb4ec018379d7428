import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { dataDir, secretKeySetting } from "../../config";
import { projectRoot } from "../../database/migrate";

/**
 * Webhook signing secrets must be readable by the dispatcher (an HMAC needs the secret
 * itself), so they are encrypted at rest with AES-256-GCM under a key that never enters the
 * database: WORK_GRAPH_SECRET_KEY (64 hex chars or base64 of 32 bytes), else the file
 * `secret.key` in the data directory, generated on first use with mode 0600. A database dump
 * alone therefore reveals no secret. Every app instance on one database needs the same key.
 */
const KEY_BYTES = 32;
const FORMAT = "v1";

let cachedKey: Buffer | undefined;

export function keyFilePath(): string {
  return path.join(path.resolve(projectRoot(), dataDir()), "secret.key");
}

function parseKey(text: string, source: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64");
  if (key.length !== KEY_BYTES) throw new Error(`${source} must hold a 32-byte key (64 hex characters or base64)`);
  return key;
}

function loadKey(): Buffer {
  const fromEnv = secretKeySetting();
  if (fromEnv) return parseKey(fromEnv, "WORK_GRAPH_SECRET_KEY");
  const file = keyFilePath();
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    // "wx": two processes racing here never overwrite each other's key; the loser reads the winner's.
    try {
      writeFileSync(file, `${randomBytes(KEY_BYTES).toString("hex")}\n`, { mode: 0o600, flag: "wx" });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  chmodSync(file, 0o600);
  return parseKey(readFileSync(file, "utf8"), file);
}

function secretKey(): Buffer {
  cachedKey ??= loadKey();
  return cachedKey;
}

/** Loads (or creates) the key now, so a misconfiguration shows at start-up rather than at the first delivery. */
export function ensureSecretKey(): void {
  secretKey();
}

export function encryptSecret(plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", secretKey(), iv);
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [FORMAT, iv.toString("base64"), cipher.getAuthTag().toString("base64"), body.toString("base64")].join(":");
}

export function decryptSecret(stored: string): string {
  const [format, iv, tag, body] = stored.split(":");
  if (format !== FORMAT || !iv || !tag || body === undefined) throw new Error("webhook secret is not in a known format");
  try {
    const decipher = createDecipheriv("aes-256-gcm", secretKey(), Buffer.from(iv, "base64"));
    decipher.setAuthTag(Buffer.from(tag, "base64"));
    return Buffer.concat([decipher.update(Buffer.from(body, "base64")), decipher.final()]).toString("utf8");
  } catch {
    throw new Error("cannot decrypt the webhook secret: this instance's secret key differs from the one it was stored with");
  }
}
