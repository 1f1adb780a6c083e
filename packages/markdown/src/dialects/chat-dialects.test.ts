import { describe, expect, it } from 'vitest';
import { renderMessages, renderText } from '../render.js';
import { commonmark, discord, plain, whatsapp } from './chat-dialects.js';

describe('the Discord dialect', () => {
  const md = (markdown: string): string => renderText(markdown, discord);

  it('keeps h1 to h3 as Discord headings and makes deeper ones bold lines', () => {
    expect(md('# One\n## Two ##\n### Three\n#### Four\n###### **Six**')).toBe(
      '# One\n\n## Two\n\n### Three\n\n**Four**\n\n**Six**',
    );
    expect(md('Title\n=====\ntext')).toBe('# Title\n\ntext');
  });

  it('renders a table as an aligned monospace code block without inline markup', () => {
    const table = [
      '| Name | **Qty** | Price |',
      '|:-----|:---:|------:|',
      '| `apple` | 3 | 1.50 |',
      '| [kiwi](https://k.example) | 12 | 10 |',
    ].join('\n');
    expect(md(`Prices:\n\n${table}\n\nDone.`)).toBe(
      [
        'Prices:',
        '',
        '```',
        'Name                     | Qty | Price',
        '-------------------------+-----+------',
        'apple                    |  3  |  1.50',
        'kiwi (https://k.example) | 12  |    10',
        '```',
        '',
        'Done.',
      ].join('\n'),
    );
  });

  it('renders a table too wide for a code block as one line per row', () => {
    const long = 'a rather long description that will not fit in one line';
    const table = `| Item | Notes | Owner |\n|---|---|---|\n| build | ${long} | Ada |\n| ship | | Bo |`;
    expect(md(table)).toBe(`- **build** — Notes: ${long} · Owner: Ada\n- **ship** — Owner: Bo`);
  });

  it('writes bold as ** (Discord underlines __), and leaves code alone', () => {
    expect(md('__bold__ and ___both___ but `__init__` and snake_case_name')).toBe(
      '**bold** and ***both*** but `__init__` and snake_case_name',
    );
  });

  it('keeps what Discord renders and escapes literal markup', () => {
    expect(md('**b** *i* ~~s~~ `c` [link](https://x.example)\n\n1. first\n2. second')).toBe(
      '**b** *i* ~~s~~ `c` [link](https://x.example)\n\n1. first\n2. second',
    );
    expect(md('2 \\* 3 and \\_x\\_ and <@123>')).toBe('2 \\* 3 and \\_x\\_ and <@123>');
  });

  it('normalises bullets and task items, keeps nested quotes and replaces rules', () => {
    expect(md('* a\n  + b\n- [ ] todo')).toBe('- a\n  - b\n\n- ☐ todo');
    expect(md('> > deep\n\n***')).toBe('> > deep\n\n──────────');
  });

  it('never touches fenced code, even markdown-looking lines inside it', () => {
    const code = '```md\n# not a heading\n| a | b |\n|---|---|\n__x__\n```';
    expect(md(`## Code\n${code}\n#### after`)).toBe(`## Code\n\n${code}\n\n**after**`);
  });

  it('escapes a number that starts a line of a paragraph, so a message starting there is no list', () => {
    expect(md('Counted:\n12. items\n\n3\\) left')).toBe('Counted:\n12\\. items\n\n3\\) left');
    expect(renderMessages(`${'word '.repeat(20)}\n2. more`, discord, { limit: 100 })).toEqual([
      'word '.repeat(20).trim(),
      '2\\. more',
    ]);
  });

  it('gives code holding backticks a longer fence', () => {
    expect(md('~~~\na ``` b\n~~~')).toBe('````\na ``` b\n````');
  });

  it('keeps tables inside their code block when they are split', () => {
    const rows = Array.from({ length: 300 }, (_, n) => `| row ${n} | ${n * 7} |`).join('\n');
    const chunks = renderMessages(`| k | v |\n|---|---|\n${rows}`, discord);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(2000);
      expect(chunk.startsWith('```\n')).toBe(true);
      expect(chunk.endsWith('\n```')).toBe(true);
    }
  });
});

describe('the WhatsApp dialect', () => {
  it.each([
    ['**bold**', '*bold*'],
    ['__bold__', '*bold*'],
    ['*italic*', '_italic_'],
    ['_italic_', '_italic_'],
    ['~~gone~~', '~gone~'],
    ['a *b **c** d* e', 'a _b *c* d_ e'],
    ['`x = 1`', '`x = 1`'],
    ['# Title', '*Title*'],
    ['### **Loud** title ###', '*Loud title*'],
    ['[docs](https://example.com/a)', 'docs (https://example.com/a)'],
    ['[https://x.dev](https://x.dev)', 'https://x.dev'],
    ['![chart](https://x.dev/c.png)', 'chart (https://x.dev/c.png)'],
    ['<https://x.dev>', 'https://x.dev'],
    ['* one\n* two\n  * three', '- one\n- two\n  - three'],
    ['---', '───'],
    ['2 * 3 * 4 = 24', '2 * 3 * 4 = 24'],
    ['snake_case_name stays', 'snake_case_name stays'],
    ['a \\*literal\\* star', 'a *literal* star'],
    ['> quoted **line**', '> quoted *line*'],
    ['**a**\r\n*b*', '*a*\n_b_'],
  ])('converts %j to %j', (input, expected) => {
    expect(renderText(input, whatsapp)).toBe(expected);
  });

  it('keeps fenced code verbatim as a monospace block without the language tag', () => {
    expect(
      renderText('Run:\n\n```ts\nconst a = **b** * c;\n# not a heading\n```\n\nthen **done**.', whatsapp),
    ).toBe('Run:\n\n```\nconst a = **b** * c;\n# not a heading\n```\n\nthen *done*.');
  });

  it('closes an unterminated fence at the end of the text', () => {
    expect(renderText('```\nhalf', whatsapp)).toBe('```\nhalf\n```');
  });
});

describe('the CommonMark dialect', () => {
  it('keeps markdown as markdown, tables as GitHub tables', () => {
    expect(
      renderText('# T\n\n**b** [l](https://x.dev)\n\n| a | b |\n|:-|-:|\n| 1 \\| 2 | 3 |', commonmark),
    ).toBe('# T\n\n**b** [l](https://x.dev)\n\n| a | b |\n| :-- | --: |\n| 1 \\| 2 | 3 |');
  });
});

describe('the plain dialect', () => {
  it.each([
    ['**bold** and *italic* and ~~gone~~', 'bold and italic and gone'],
    ['# Title\n\ntext', 'Title\n\ntext'],
    ['[docs](https://example.com/a) [x]', 'docs (https://example.com/a) [x]'],
    ['a \\*literal\\* star, [brackets] and <angles>', 'a *literal* star, [brackets] and <angles>'],
    ['* one\n* two', '- one\n- two'],
    ['1. first\n2. second', '1. first\n2. second'],
    ['`x = 1`', '`x = 1`'],
    ['> quoted **line**', '> quoted line'],
  ])('shows %j as %j, with no markup and no escapes', (input, expected) => {
    expect(renderText(input, plain)).toBe(expected);
  });

  it('keeps fenced code in a fence, without its language', () => {
    expect(renderText('```ts\nconst a = **b**;\n```', plain)).toBe('```\nconst a = **b**;\n```');
  });
});
