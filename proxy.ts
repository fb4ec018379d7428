import { NextResponse, type NextRequest } from "next/server";

/**
 * Next 16 "proxy" (formerly middleware): a strict Content-Security-Policy with a fresh nonce
 * per page view. Next reads the nonce from the request's CSP header and puts it on its own
 * inline bootstrap scripts; nothing else inline may run, and no other site may frame the
 * dashboard. The static headers (nosniff, X-Frame-Options, Referrer-Policy) are in next.config.js.
 */
export function contentSecurityPolicy(nonce: string): string {
  // React's development build evaluates strings (`npm run dev` only).
  const devEval = process.env.NODE_ENV === "development" ? " 'unsafe-eval'" : "";
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${devEval}`,
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

export function proxy(request: NextRequest) {
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
  const policy = contentSecurityPolicy(nonce);
  const headers = new Headers(request.headers);
  headers.set("x-nonce", nonce);
  headers.set("content-security-policy", policy);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("content-security-policy", policy);
  return response;
}

export const config = {
  matcher: [{ source: "/((?!_next/static|_next/image|favicon.ico).*)" }],
};
