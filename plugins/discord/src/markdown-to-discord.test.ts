import { describe, expect, it } from 'vitest';
import { chunkDiscordMarkdown } from './chunk-markdown.js';
import { markdownToDiscord } from './markdown-to-discord.js';

describe('markdownToDiscord', () => {
  it('keeps h1 to h3 as Discord headings and makes deeper ones bold lines', () => {
    expect(markdownToDiscord('# One\n## Two ##\n### Three\n#### Four\n###### *Six*')).toBe(
      '# One\n## Two\n### Three\n**Four**\n**Six**',
    );
  });

  it('turns setext headings into Discord headings', () => {
    expect(markdownToDiscord('Title\n=====\nSub\n---\ntext')).toBe('# Title\n## Sub\ntext');
  });

  it('renders a table as an aligned monospace code block without inline markup', () => {
    const table = [
      '| Name | **Qty** | Price |',
      '|:-----|:---:|------:|',
      '| `apple` | 3 | 1.50 |',
      '| [kiwi](https://k.example) | 12 | 10 |',
    ].join('\n');
    expect(markdownToDiscord(`Prices:\n${table}\nDone.`)).toBe(
      [
        'Prices:',
        '```',
        'Name                     | Qty | Price',
        '-------------------------+-----+------',
        'apple                    |  3  |  1.50',
        'kiwi (https://k.example) | 12  |    10',
        '```',
        'Done.',
      ].join('\n'),
    );
  });

  it('renders a table too wide for a code block as one bullet per row', () => {
    const long = 'a rather long description that will not fit in one line';
    const table = `| Item | Notes | Owner |\n|---|---|---|\n| build | ${long} | Ada |\n| ship | | Bo |`;
    expect(markdownToDiscord(table)).toBe(
      `- **build** — Notes: ${long} · Owner: Ada\n- **ship** — Owner: Bo`,
    );
  });

  it('turns CommonMark bold underscores into Discord bold, outside code only', () => {
    expect(markdownToDiscord('__bold__ and ___both___ but `__init__` and snake__case__name')).toBe(
      '**bold** and ***both*** but `__init__` and snake__case__name',
    );
  });

  it('keeps what Discord already renders', () => {
    const text = '**b** *i* _i_ ~~s~~ `c` [link](https://x.example) ||spoiler||\n1. first\n2. second';
    expect(markdownToDiscord(text)).toBe(text);
  });

  it('normalises bullets and task items, flattens nested quotes and replaces rules', () => {
    expect(
      markdownToDiscord(
        '* a\n  + b\n- [ ] todo\n- [x] done\n> > deep\n***\n![logo](https://l.example/x.png)',
      ),
    ).toBe('- a\n  - b\n- ☐ todo\n- ☑ done\n> deep\n──────────\n[logo](https://l.example/x.png)');
  });

  it('never touches fenced code, even markdown-looking lines inside it', () => {
    const code = '```md\n# not a heading\n| a | b |\n|---|---|\n__x__\n```';
    expect(markdownToDiscord(`## Code\n${code}\n#### after`)).toBe(`## Code\n${code}\n**after**`);
  });

  it('keeps an unclosed fence as code to the end', () => {
    expect(markdownToDiscord('~~~\n# inside\n__x__')).toBe('~~~\n# inside\n__x__');
  });

  it('keeps escaped pipes inside a cell', () => {
    expect(markdownToDiscord('| expr | ok |\n|---|---|\n| a \\| b | yes |')).toBe(
      '```\nexpr  | ok\n------+----\na | b | yes\n```',
    );
  });

  it('gives a table whose cells hold backticks a longer fence', () => {
    const out = markdownToDiscord('| a |\n|---|\n| x ``` y |');
    expect(out.split('\n')[0]).toBe('````');
    expect(out.split('\n').at(-1)).toBe('````');
  });

  it('produces tables that chunking never cuts outside their code block', () => {
    const rows = Array.from({ length: 300 }, (_, n) => `| row ${n} | ${n * 7} |`).join('\n');
    const chunks = chunkDiscordMarkdown(markdownToDiscord(`| k | v |\n|---|---|\n${rows}`));
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(2000);
      expect(chunk.startsWith('```')).toBe(true);
      expect(chunk.endsWith('```')).toBe(true);
    }
  });
});
