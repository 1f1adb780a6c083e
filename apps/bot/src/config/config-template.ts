/**
 * The commented JSON5 config `colloquy init` writes. Every setting is optional; what is shown
 * commented out is the default or an example.
 */
export const CONFIG_TEMPLATE = `// Colloquy bot config (JSON5: comments and trailing commas are fine).
// Check it with: colloquy config check
// Environment variables fill settings this file leaves out (the file wins):
//   COLLOQUY_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY, ANTHROPIC_API_KEY,
//   TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN, SLACK_BOT_TOKEN + SLACK_APP_TOKEN, COLLOQUY_WHATSAPP=1,
//   COLLOQUY_TOKEN, COLLOQUY_STATE_DIR.
{
  // --- the model -------------------------------------------------------------------------------
  agents: {
    defaults: {
      // "provider/model"; the provider is a key of models.providers below.
      // model: "openai/gpt-4o-mini",
      // systemPrompt: "You are a helpful assistant.",
      subagents: {
        maxSpawnDepth: 1, // sub-agents may not spawn their own
        maxChildrenPerAgent: 5,
        runTimeoutSeconds: 0, // 0 = no limit
      },
    },
  },
  models: {
    providers: {
      // openai: { kind: "openai-compatible", baseURL: "https://api.openai.com/v1", apiKeyEnv: "OPENAI_API_KEY" },
      // local: { kind: "openai-compatible", baseURL: "http://127.0.0.1:11434/v1" }, // Ollama, vLLM, llama.cpp
      // anthropic: { kind: "anthropic", apiKeyEnv: "ANTHROPIC_API_KEY" },
    },
  },

  // --- sessions and tools ----------------------------------------------------------------------
  session: {
    dmScope: "per-channel-peer", // every person in every channel gets their own session
    // sendPolicy: { rules: [{ match: { channel: "discord", chatType: "group" }, action: "deny" }], default: "allow" },
  },
  tools: {
    sessions: { visibility: "tree" }, // self | tree | agent | all
  },

  // --- MCP tools --------------------------------------------------------------------------------
  // Servers whose tools agents may use, named <server>__<tool>. An agent sees only the tools its
  // allow list names: agents: { list: [{ id: "main", default: true, tools: { allow: ["files__*"] } }] }.
  // Check one with: colloquy mcp probe files
  mcp: {
    servers: {
      // files: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"] },
      // tracker: { url: "https://mcp.example.com/mcp", bearerTokenEnv: "TRACKER_MCP_TOKEN" },
    },
    // callTimeoutSeconds: 60, // per tool call
    // maxResultChars: 100000, // longer results are cut, and the agent is told
  },

  // --- OpenTelemetry (docs/telemetry.md) ----------------------------------------------------------
  // Traces and metrics over OTLP/HTTP; also on when OTEL_EXPORTER_OTLP_ENDPOINT is set.
  // telemetry: { enabled: true, endpoint: "http://127.0.0.1:4318", recordContent: false },

  // --- the gateway (CLI and tools over WebSocket) ----------------------------------------------
  gateway: {
    host: "127.0.0.1",
    port: 7421,
    // token: a random admin token is generated into the state dir on first start.
  },

  // --- channels --------------------------------------------------------------------------------
  channels: {
    webchat: {
      enabled: true,
      host: "127.0.0.1",
      port: 7420,
      // title: "Colloquy",
      // assistantName: "Assistant",
    },
    // telegram: { accounts: [{ token: "123456:ABC..." }], dmPolicy: "pairing" },
    // discord: { accounts: [{ tokenEnv: "DISCORD_BOT_TOKEN" }] },
    // slack: { accounts: [{ botTokenEnv: "SLACK_BOT_TOKEN", appTokenEnv: "SLACK_APP_TOKEN" }] }, // Socket Mode
    // whatsapp: { dmPolicy: "pairing" }, // prints a QR code to scan on first start
  },

  // --- this app --------------------------------------------------------------------------------
  app: {
    // stateDir: ".colloquy", // database, admin token, channel state (relative to this file)
    // Who may send /send on|off|inherit, per channel (user ids; Telegram also @username).
    // /status in a direct chat shows your id.
    owners: {
      // telegram: ["123456789"],
      // discord: ["112233445566778899"],
      // slack: ["U0123ABCD"],
      // whatsapp: ["+15551234567"],
    },
    logLevel: "info",
  },
}
`;
