/**
 * Reads the JSON-RPC messages of a `text/event-stream` response as they come, until the stream
 * ends or `stop` says so (then the stream is cancelled, as a client that has what it wanted does).
 */
export async function readEvents(
  response: Response,
  stop?: (message: Record<string, unknown>) => boolean,
): Promise<{ messages: Array<Record<string, unknown>>; problems: string[] }> {
  const messages: Array<Record<string, unknown>> = [];
  const problems: string[] = [];
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (value) buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data === '') continue;
      try {
        messages.push(JSON.parse(data) as Record<string, unknown>);
      } catch {
        problems.push(`an event that is not JSON: ${data.slice(0, 100)}`);
        continue;
      }
      if (stop?.(messages[messages.length - 1]!)) {
        await reader.cancel();
        return { messages, problems };
      }
    }
    if (done) break;
  }
  if (buffer.trim() !== '') problems.push(`a partial event at the end: ${buffer.slice(0, 100)}`);
  return { messages, problems };
}
