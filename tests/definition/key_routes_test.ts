import assert from "node:assert/strict";
import { parseDefinition } from "../../agents/definition/parse.ts";
import {
  isRoutingVariable,
  keyRouteProblem,
  parseKeyHosts,
  settingsEnvProblem,
} from "../../agents/definition/key_routes.ts";

const noEnv = { get: (_: string) => undefined };
const allowing = (value: string) => ({
  get: (name: string) => name === "FINISHLINE_KEY_HOSTS" ? value : undefined,
});

Deno.test("a well-known key goes to its provider's host over https, and nowhere else by itself", () => {
  assert.equal(
    keyRouteProblem("OPENAI_API_KEY", "https://api.openai.com/v1/embeddings", { env: noEnv }),
    undefined,
  );
  assert.equal(
    keyRouteProblem("VOYAGE_API_KEY", "https://api.voyageai.com/v1/embeddings", { env: noEnv }),
    undefined,
  );
  for (
    const [variable, url] of [
      ["ANTHROPIC_API_KEY", "https://collect.example/v1"],
      ["ANTHROPIC_API_KEY", "http://api.anthropic.com/v1"],
      ["OPENAI_API_KEY", "https://api.openai.com.collect.example/v1"],
      ["OPENAI_API_KEY", "https://user@collect.example/api.openai.com"],
      ["GH_TOKEN", "https://api.anthropic.com/"],
      ["GITHUB_TOKEN", "https://127.0.0.1:8443/"],
      ["MY_OWN_KEY", "http://localhost:11434/v1/embeddings"],
    ]
  ) {
    assert.ok(keyRouteProblem(variable, url, { env: noEnv }), `${variable} to ${url} is refused`);
  }
});

Deno.test("the user's FINISHLINE_KEY_HOSTS allows a variable to one host (and port), not others", () => {
  const env = allowing("MY_OWN_KEY=localhost:11434, ANTHROPIC_API_KEY=proxy.corp.example");
  assert.equal(keyRouteProblem("MY_OWN_KEY", "http://localhost:11434/v1", { env }), undefined);
  assert.ok(keyRouteProblem("MY_OWN_KEY", "http://localhost:9999/v1", { env }));
  assert.equal(
    keyRouteProblem("ANTHROPIC_API_KEY", "https://proxy.corp.example/x", { env }),
    undefined,
  );
  assert.ok(keyRouteProblem("OPENAI_API_KEY", "https://proxy.corp.example/x", { env }));
  assert.deepEqual(parseKeyHosts("A=h, =x,B"), [{ variable: "A", host: "h" }]);
});

Deno.test("variables that say where to connect or whom to trust are told apart from the others", () => {
  for (
    const name of [
      "ANTHROPIC_BASE_URL",
      "OPENAI_BASE_URL",
      "OPENAI_API_BASE",
      "GOOGLE_GEMINI_BASE_URL",
      "HTTPS_PROXY",
      "http_proxy",
      "ALL_PROXY",
      "NO_PROXY",
      "NODE_TLS_REJECT_UNAUTHORIZED",
      "NODE_EXTRA_CA_CERTS",
      "SSL_CERT_FILE",
      "REQUESTS_CA_BUNDLE",
      "NODE_OPTIONS",
      "AZURE_OPENAI_ENDPOINT",
      "OLLAMA_HOST",
    ]
  ) assert.equal(isRoutingVariable(name), true, name);
  for (
    const name of ["GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_CLI_NO_RELAUNCH", "CODEX_HOME", "DEBUG"]
  ) {
    assert.equal(isRoutingVariable(name), false, name);
  }
});

Deno.test("parseDefinition refuses a definition that routes a key, and takes it once the user allows it", () => {
  const text = JSON.stringify({
    name: "x",
    behavior: { completionConfig: { maxIterations: 1 } },
    learnings: {
      embeddings: { provider: "http", url: "http://127.0.0.1:1/e", model: "m", apiKeyEnv: "K" },
    },
  });
  assert.throws(
    () => parseDefinition(text, { displayPath: "agent.json", env: noEnv }),
    {
      message:
        'Cannot load agent definition "agent.json": "learnings.embeddings.apiKeyEnv": K is sent to 127.0.0.1:1 only when you allow it: agent.json cannot send a key elsewhere; to allow it, add K for 127.0.0.1:1 to FINISHLINE_KEY_HOSTS ("VAR=host[:port],...") in your own environment',
    },
  );
  const definition = parseDefinition(text, {
    displayPath: "agent.json",
    env: allowing("K=127.0.0.1"),
  });
  assert.equal(definition.learnings.embeddings?.apiKeyEnv, "K");
  // No key, no route to check: a local endpoint without one is fine.
  parseDefinition(
    JSON.stringify({
      name: "x",
      behavior: { completionConfig: { maxIterations: 1 } },
      learnings: { embeddings: { provider: "http", url: "http://127.0.0.1:1/e", model: "m" } },
    }),
    { displayPath: "agent.json", env: noEnv },
  );
});

Deno.test("settings that came with the repository may not move the agent's endpoint, proxy or trust", () => {
  const env = { get: (name: string) => name === "HTTPS_PROXY" ? "http://mine:3128" : undefined };
  assert.equal(settingsEnvProblem("DEBUG", "1", { env }), undefined);
  assert.equal(
    settingsEnvProblem("HTTPS_PROXY", "http://mine:3128", { env }),
    undefined,
    "the user's own",
  );
  assert.match(settingsEnvProblem("HTTPS_PROXY", "http://theirs:3128", { env })!, /HTTPS_PROXY/);
  assert.match(settingsEnvProblem("NODE_TLS_REJECT_UNAUTHORIZED", "0", { env })!, /whom it trusts/);
  assert.equal(
    settingsEnvProblem("ANTHROPIC_BASE_URL", "https://api.anthropic.com/", { env }),
    undefined,
  );
  assert.match(
    settingsEnvProblem("ANTHROPIC_BASE_URL", "https://collect.example", { env })!,
    /a file of the repository cannot send a key elsewhere/,
  );
  assert.match(
    settingsEnvProblem("OPENAI_BASE_URL", "http://127.0.0.1:1", { env })!,
    /OPENAI_API_KEY/,
  );
});
