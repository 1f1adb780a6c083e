import type { AgentTool } from '@colloquy/core';
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { historyTokenBudget } from './prompt-budget.js';
import { estimateTokens } from './token-estimate.js';

const parameters = Type.Object({ sessionKey: Type.String({ description: 'A session key.' }) });

function tool(name: string, description: string, schema = parameters): AgentTool {
  return {
    name,
    description,
    parameters: schema,
    execute: async () => ({ content: [{ type: 'text', text: '{}' }], details: {} }),
  };
}

const toolCost = (t: AgentTool) =>
  10 + estimateTokens(t.name) + estimateTokens(t.description) + estimateTokens(JSON.stringify(t.parameters));

describe('historyTokenBudget', () => {
  it('leaves the window minus the system prompt, the tools and a quarter of the window for the answer', () => {
    const tools = [tool('sessions_list', 'List the sessions you can see.')];
    const system = 'You are Colloquy.';
    expect(historyTokenBudget(8000, system, tools)).toBe(
      8000 - estimateTokens(system) - toolCost(tools[0]!) - 2000,
    );
  });

  it('reserves at most 4,096 tokens for the answer', () => {
    expect(historyTokenBudget(100_000, '', [])).toBe(100_000 - 4096);
  });

  it('counts the tools built for each turn anew, with the same schema, the same every turn', () => {
    const first = historyTokenBudget(8000, 'system', [tool('a', 'Does A.'), tool('b', 'Does B.')]);
    const again = historyTokenBudget(8000, 'system', [tool('a', 'Does A.'), tool('b', 'Does B.')]);
    expect(again).toBe(first);
  });

  it('counts a new description or name given with a schema it has seen', () => {
    const short = tool('sessions_send', 'Send.');
    const long = tool('sessions_send', `Send a message to another session. ${'More words. '.repeat(40)}`);
    const renamed = tool('sessions_send_and_wait_for_the_reply', 'Send.');
    expect(historyTokenBudget(8000, '', [short])).toBe(8000 - toolCost(short) - 2000);
    expect(historyTokenBudget(8000, '', [long])).toBe(8000 - toolCost(long) - 2000);
    expect(historyTokenBudget(8000, '', [renamed])).toBe(8000 - toolCost(renamed) - 2000);
    expect(historyTokenBudget(8000, '', [short])).toBe(8000 - toolCost(short) - 2000);
  });

  it('counts each tool of a turn, also two that share one schema', () => {
    const a = tool('a', 'Does A.');
    const b = tool('b', `Does B, at length. ${'Details. '.repeat(30)}`);
    expect(historyTokenBudget(8000, '', [a, b])).toBe(8000 - toolCost(a) - toolCost(b) - 2000);
  });
});
