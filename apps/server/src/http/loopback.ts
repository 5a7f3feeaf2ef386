/**
 * True for `localhost`, `*.localhost`, 127.0.0.0/8 and `[::1]` (as `URL.hostname` writes it): this
 * machine, which no certificate authority names and no other machine reaches.
 * @example isLoopbackHost(new URL('http://127.0.0.1:8080').hostname) // true
 */
export function isLoopbackHost(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname.endsWith('.localhost') ||
    hostname === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  );
}
