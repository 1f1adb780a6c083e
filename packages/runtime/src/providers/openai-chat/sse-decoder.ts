/**
 * Splits a `text/event-stream` body into the `data` of its events, as text arrives in arbitrary
 * pieces: lines may end in LF, CRLF or CR (also split across pieces), `data` lines of one event are
 * joined with LF, comments and other fields are skipped, and a blank line ends an event.
 */
export class SseDecoder {
  #line = '';
  #data: string[] = [];
  #afterCR = false;

  /**
   * Feeds the next piece of the body.
   *
   * @param text - decoded text (split anywhere, but not inside a character)
   * @returns the data of the events it completed, in order
   */
  push(text: string): string[] {
    const events: string[] = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const char = text.charCodeAt(i);
      if (char !== 10 && char !== 13) continue;
      if (char === 10 && this.#afterCR && i === start && this.#line === '') {
        // The LF of a CRLF whose CR ended the previous piece.
        this.#afterCR = false;
        start = i + 1;
        continue;
      }
      this.#endLine(this.#line + text.slice(start, i), events);
      this.#line = '';
      this.#afterCR = char === 13;
      if (char === 13 && text.charCodeAt(i + 1) === 10) i++;
      start = i + 1;
    }
    if (start < text.length) {
      this.#line += text.slice(start);
      this.#afterCR = false;
    }
    return events;
  }

  /**
   * Ends the body: an event cut off by the end (no blank line after it) still counts.
   *
   * @returns the data of that event, if any
   */
  end(): string[] {
    const events: string[] = [];
    if (this.#line !== '') this.#endLine(this.#line, events);
    this.#line = '';
    if (this.#data.length > 0) events.push(this.#data.join('\n'));
    this.#data = [];
    return events;
  }

  #endLine(line: string, events: string[]): void {
    if (line === '') {
      if (this.#data.length > 0) events.push(this.#data.join('\n'));
      this.#data = [];
      return;
    }
    if (!line.startsWith('data:')) return; // comments (":"), event, id, retry
    this.#data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
  }
}
