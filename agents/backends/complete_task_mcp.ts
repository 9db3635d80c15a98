/**
 * A stdio MCP server that offers the complete_task tool (and, with
 * `FINISHLINE_FINISH_TOOL=1`, the finish tool) to an agent started over the
 * Agent Client Protocol. The agent starts it; each call is posted to the
 * runner at `FINISHLINE_COMPLETE_TASK_URL` as `{tool, arguments}`, and the
 * runner's answer (the immediate check feedback) is the tool result the
 * agent reads.
 *
 * Run: `deno run --allow-net --allow-env complete_task_mcp.ts`.
 *
 * @module
 */

import { z } from "zod";
import {
  COMPLETE_TASK_DESCRIPTION,
  COMPLETE_TASK_NAME,
  COMPLETE_TASK_SERVER,
  COMPLETE_TASK_SHAPE,
} from "../record/complete_task_tool.ts";
import { FINISH_DESCRIPTION, FINISH_NAME, FINISH_SHAPE } from "../record/finish_tool.ts";
import { VERSION } from "../support/version.ts";

/** The environment variable that names the runner's callback URL. */
export const CALLBACK_URL_ENV = "FINISHLINE_COMPLETE_TASK_URL";

/** The environment variable that, set to `1`, offers the finish tool too. */
export const FINISH_TOOL_ENV = "FINISHLINE_FINISH_TOOL";

interface RpcMessage {
  id?: number | string | null;
  method?: string;
  params?: Record<string, unknown>;
}

/**
 * Answer one MCP request; undefined for a notification.
 *
 * @param message The JSON-RPC message.
 * @param callbackUrl Where complete_task calls are posted.
 * @param finish Offer the finish tool too.
 * @returns The response, or undefined when none is due.
 */
export async function answer(
  message: RpcMessage,
  callbackUrl: string,
  finish = false,
): Promise<Record<string, unknown> | undefined> {
  if (message.id === undefined || message.id === null) return undefined;
  const reply = (result: unknown) => ({ jsonrpc: "2.0", id: message.id, result });
  switch (message.method) {
    case "initialize":
      return reply({
        protocolVersion: message.params?.protocolVersion ?? "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: COMPLETE_TASK_SERVER, version: VERSION },
      });
    case "tools/list":
      return reply({
        tools: [
          {
            name: COMPLETE_TASK_NAME,
            description: COMPLETE_TASK_DESCRIPTION,
            inputSchema: z.toJSONSchema(z.object(COMPLETE_TASK_SHAPE)),
          },
          ...(finish
            ? [{
              name: FINISH_NAME,
              description: FINISH_DESCRIPTION,
              inputSchema: z.toJSONSchema(z.object(FINISH_SHAPE)),
            }]
            : []),
        ],
      });
    case "tools/call": {
      const response = await fetch(callbackUrl, {
        method: "POST",
        body: JSON.stringify({
          tool: message.params?.name ?? COMPLETE_TASK_NAME,
          arguments: message.params?.arguments ?? {},
        }),
      });
      const text = await response.text();
      return reply({ content: [{ type: "text", text }], isError: !response.ok });
    }
    case "ping":
      return reply({});
    default:
      return {
        jsonrpc: "2.0",
        id: message.id,
        error: { code: -32601, message: `method not found: ${message.method}` },
      };
  }
}

async function serve(): Promise<void> {
  const callbackUrl = Deno.env.get(CALLBACK_URL_ENV) ?? "";
  const finish = Deno.env.get(FINISH_TOOL_ENV) === "1";
  const encoder = new TextEncoder();
  let buffered = "";
  for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
    buffered += chunk;
    let newline: number;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (!line) continue;
      const response = await answer(JSON.parse(line) as RpcMessage, callbackUrl, finish);
      if (response) await Deno.stdout.write(encoder.encode(JSON.stringify(response) + "\n"));
    }
  }
}

if (import.meta.main) await serve();
