// The pieces that let partly compatible servers drive the pipeline: reasoning stripped, JSON found
// in fenced or chatty answers, the three ways of asking for JSON, and which 400s mean "not that way".
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { parseJsonAnswer, refusesResponseFormat, stripReasoning, structuredParams } from '../../src/activities/llm/call';
import { ErrorType } from '../../src/shared/errors';

describe('structured output compatibility', () => {
  it('strips reasoning blocks, also with the opening tag missing or the answer never given', () => {
    expect(stripReasoning('<think>first {a}\nthen</think>\n{"x":1}')).toBe('{"x":1}');
    expect(stripReasoning('<THINKING>a</THINKING>answer <reasoning>b</reasoning>done')).toBe('answer done');
    expect(stripReasoning('reasoning without an opening tag</think>\nThe answer.')).toBe('The answer.');
    expect(stripReasoning('<think>cut off before the answer')).toBe('');
    expect(stripReasoning('No reasoning here.')).toBe('No reasoning here.');
  });

  it('finds the JSON in a fenced or chatty answer', () => {
    expect(parseJsonAnswer('{"a":1}')).toEqual({ a: 1 });
    expect(parseJsonAnswer('Here it is:\n```json\n{"a":2}\n```')).toEqual({ a: 2 });
    expect(parseJsonAnswer('Sure! {"a":3} Hope that helps.')).toEqual({ a: 3 });
    expect(() => parseJsonAnswer('no json at all')).toThrow();
  });

  it('asks for JSON three ways', () => {
    const format = { type: 'json_schema' as const, json_schema: { name: 'Plan', schema: { type: 'object' }, strict: true } };
    const messages = [
      { role: 'system' as const, content: 'You plan.' },
      { role: 'user' as const, content: 'q' },
    ];
    expect(structuredParams('json_schema', format, messages)).toEqual({ messages, response_format: format });
    const obj = structuredParams('json_object', format, messages);
    expect(obj.response_format).toEqual({ type: 'json_object' });
    expect(obj.messages[0]!.content).toBe(
      'You plan.\n\nAnswer with one JSON object (Plan) that matches this JSON Schema, and nothing else:\n{"type":"object"}',
    );
    const tool = structuredParams('tool', format, messages);
    expect(tool.tool_choice).toEqual({ type: 'function', function: { name: 'Plan' } });
    expect(tool.response_format).toBeUndefined();
  });

  it('tells a refused response_format from other bad requests', () => {
    const bad = (m: string) => ApplicationFailure.nonRetryable(m, ErrorType.LlmBadRequest);
    expect(refusesResponseFormat(bad("LLM 400: response_format.type Input should be 'text' or 'json_object'"))).toBe(true);
    expect(refusesResponseFormat(bad("Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model."))).toBe(
      true,
    );
    expect(refusesResponseFormat(bad('LLM 400: messages must not be empty'))).toBe(false);
    expect(refusesResponseFormat(ApplicationFailure.nonRetryable('response_format', ErrorType.LlmAuth))).toBe(false);
  });
});
