import { describe, expect, it } from 'vitest';
import { searchSql } from './conversation-search';

const everything = { text: true, figures: true };

describe('searchSql', () => {
  it('finds real conversations, newest first, a page and one more to tell whether there is a next', () => {
    // Act
    const sql = searchSql({}, everything, { offset: 50, limit: 25 });

    // Assess
    expect(sql).toContain('WHERE NOT c.is_simulated');
    expect(sql).toContain('ORDER BY c.created_at DESC, c.id DESC\nLIMIT 26 OFFSET 50');
  });

  it('takes the words said literally: quotes and wildcards match themselves', () => {
    // Act
    const sql = searchSql({ text: "100% it's_here" }, everything, { offset: 0, limit: 25 });

    // Assess
    expect(sql).toContain("m.message ILIKE '%100\\% it''s\\_here%' ESCAPE '\\'");
  });

  it('filters by cost and latency through the turns, by escalation and status through the conversation', () => {
    // Act
    const sql = searchSql(
      { min_cost_usd: 0.5, min_first_token_ms: 800, escalated: 'yes', status: 'open', source: 'all' },
      everything,
      { offset: 0, limit: 25 },
    );

    // Assess
    expect(sql).toContain('LEFT JOIN t ON t.conversation_id = c.id');
    expect(sql).toContain('t.cost_usd > 0.5');
    expect(sql).toContain('t.slowest_first_token_ms > 800');
    expect(sql).toContain('c.escalation_count > 0');
    expect(sql).toContain('NOT c.is_finished');
    expect(sql).not.toMatch(/WHERE.*is_simulated/s);
  });

  it('leaves out the filters on what the caller may not read everywhere', () => {
    // Act
    const sql = searchSql(
      { text: 'printer', min_cost_usd: 1 },
      { text: false, figures: false },
      { offset: 0, limit: 25 },
    );

    // Assess
    expect(sql).not.toContain('messages');
    expect(sql).not.toContain('interactions');
    expect(sql).not.toContain('cost_usd');
  });
});
