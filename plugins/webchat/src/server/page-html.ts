/** Escapes text for an HTML text node or a double-quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The chat page's HTML shell. Static markup only: no inline script or style (the CSP forbids them);
 * the page module fills it in once the WebSocket says `ready`.
 *
 * @param title - the page title (escaped here)
 */
export function renderPageHtml(title: string): string {
  const t = escapeHtml(title);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<title>${t}</title>
<link rel="icon" href="static/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="static/style.css">
<script type="module" src="static/page/main.js"></script>
</head>
<body>
<div class="app" id="app">
  <header class="bar">
    <div class="brand"><img class="logo" src="static/icon.svg" alt="" width="28" height="28"><div><h1 id="title">${t}</h1><p class="subtitle" id="subtitle">Connecting…</p></div></div>
    <div class="actions">
      <span class="status" id="status" data-state="connecting" role="status" aria-live="polite"><span class="dot"></span><span id="status-text">Connecting</span></span>
      <button type="button" class="ghost" id="name-button" hidden>Name</button>
      <button type="button" class="ghost" id="panel-button" hidden aria-controls="panel" aria-expanded="false">Sessions</button>
    </div>
  </header>
  <div class="layout">
    <main class="chat" id="chat">
      <div class="scroll" id="scroll">
        <div class="column">
          <div class="empty" id="empty" hidden><div class="empty-mark" aria-hidden="true"></div><p class="empty-title">Start the conversation</p><p class="empty-text" id="empty-text">Ask anything. Replies stream in as they are written.</p></div>
          <ol class="messages" id="messages" aria-live="polite" aria-label="Messages"></ol>
        </div>
      </div>
      <div class="dock">
        <div class="column">
          <div class="typing" id="typing" aria-live="polite"></div>
          <p class="notice" id="notice" role="alert" hidden></p>
          <p class="notice" id="limit" aria-live="polite" hidden></p>
          <form class="composer" id="composer" autocomplete="off">
            <label class="visually-hidden" for="input">Message</label>
            <textarea id="input" rows="1" placeholder="Write a message…" enterkeyhint="send" disabled></textarea>
            <button type="submit" id="send" class="send" disabled aria-label="Send"><svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true"><path d="M3.4 20.4 21 12 3.4 3.6 3.4 10.2 16 12 3.4 13.8z" fill="currentColor"/></svg></button>
          </form>
        </div>
      </div>
    </main>
    <aside class="panel" id="panel" hidden aria-label="Sessions">
      <div class="panel-head"><h2>Sessions</h2><span class="panel-meta" id="panel-meta"></span><button type="button" class="ghost icon" id="panel-close" aria-label="Close sessions">×</button></div>
      <ul class="tree" id="tree"></ul>
      <section class="timeline" id="timeline" hidden aria-label="Spawn timeline">
        <div class="panel-head"><h2 id="timeline-title">Timeline</h2><span class="panel-meta" id="timeline-meta"></span><button type="button" class="ghost icon" id="timeline-close" aria-label="Back to the sessions">×</button></div>
        <div class="tl-axis" id="timeline-axis" aria-hidden="true"></div>
        <div class="tl-rows" id="timeline-rows" tabindex="-1"></div>
      </section>
      <section class="transcript" id="transcript" hidden aria-label="Transcript">
        <div class="panel-head"><h2 id="transcript-title">Transcript</h2><span class="panel-meta" id="transcript-meta"></span><button type="button" class="ghost icon" id="transcript-close" aria-label="Back to the sessions">×</button></div>
        <ol class="transcript-list" id="transcript-list"></ol>
      </section>
    </aside>
  </div>
</div>
</body>
</html>
`;
}
