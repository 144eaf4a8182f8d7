/**
 * Opens a URL in the user's browser with the platform's opener (`xdg-open`, `open`, or
 * `rundll32 url.dll,FileProtocolHandler`), started directly with an argument list and never
 * through a shell, so nothing in the URL is interpreted. A missing opener is not an error: whoever
 * calls this also prints the URL. It does not check the URL: see `checkAuthorizationUrl`.
 */
import { spawn as nodeSpawn } from 'node:child_process';

/** The opener for a platform: the program and the arguments before the URL. */
export function browserOpener(platform: NodeJS.Platform = process.platform): { command: string; args: string[] } {
  if (platform === 'darwin') return { command: 'open', args: [] };
  if (platform === 'win32') return { command: 'rundll32', args: ['url.dll,FileProtocolHandler'] };
  return { command: 'xdg-open', args: [] };
}

/** Options of {@link openBrowser}: for tests and unusual platforms. */
export interface OpenBrowserOptions {
  readonly platform?: NodeJS.Platform;
  readonly spawn?: typeof nodeSpawn;
}

/**
 * Starts the platform's opener on `url`, detached, its output ignored; an opener that is missing
 * or fails is ignored too. Returns whether an opener was started.
 */
export function openBrowser(url: string | URL, options: OpenBrowserOptions = {}): boolean {
  const { command, args } = browserOpener(options.platform);
  try {
    const child = (options.spawn ?? nodeSpawn)(command, [...args, String(url)], {
      shell: false,
      detached: true,
      stdio: 'ignore',
      windowsHide: true,
    });
    child.on('error', () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}
