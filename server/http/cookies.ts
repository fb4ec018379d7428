/** What the session and sign-in routes set on a cookie. */
export interface CookieOptions {
  httpOnly: boolean;
  sameSite: "strict" | "lax";
  path: string;
  secure: boolean;
  /** Seconds; 0 deletes the cookie. */
  maxAge: number;
}

/** Appends a Set-Cookie header (with Expires beside Max-Age for clients that know only Expires). */
export function setCookie(headers: Headers, name: string, value: string, options: CookieOptions): void {
  const attributes = [
    `Path=${options.path}`,
    options.maxAge > 0 && `Expires=${new Date(Date.now() + options.maxAge * 1000).toUTCString()}`,
    `Max-Age=${options.maxAge}`,
    options.secure && "Secure",
    options.httpOnly && "HttpOnly",
    `SameSite=${options.sameSite}`,
  ].filter(Boolean);
  headers.append("set-cookie", `${name}=${encodeURIComponent(value)}; ${attributes.join("; ")}`);
}

/** A redirect whose headers can still take cookies (Response.redirect's cannot). */
export const redirectTo = (url: string | URL, status: 303): Response => new Response(null, { status, headers: { location: new URL(url).href } });
