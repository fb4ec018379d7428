/** Settles a promise into { ok, value } or { ok: false, reason, detail } (a WorkGraphError's). */
export async function settle<T>(promise: Promise<T>) {
  try {
    return { ok: true as const, value: await promise };
  } catch (error) {
    const cause = (error as { cause?: { reason?: string; detail?: Record<string, unknown> } }).cause;
    if (!cause?.reason) throw error;
    return { ok: false as const, reason: cause.reason, detail: cause.detail ?? {} };
  }
}
