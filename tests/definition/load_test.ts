import assert from "node:assert/strict";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { listAgents, loadDefinition } from "../../agents/definition/load.ts";
import { DEFAULT_TOOLS, REPO_ROOT } from "./_helpers.ts";

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "finishline-definition-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function writeAgent(
  root: string,
  name: string,
  text: string,
): Promise<void> {
  await Deno.mkdir(path.join(root, ".agent", name), { recursive: true });
  await Deno.writeTextFile(path.join(root, ".agent", name, "agent.json"), text);
}

Deno.test("the built-in iterator agent loads with its documented settings", async () => {
  await withTempDir(async (cwd) => {
    const loaded = await loadDefinition("iterator", { cwd });
    assert.equal(loaded.builtin, true);
    assert.equal(loaded.displayPath, "<builtin>/.agent/iterator/agent.json");
    assert.equal(
      loaded.url.href,
      new URL(".agent/iterator/agent.json", REPO_ROOT).href,
    );
    assert.equal(
      loaded.agentDir.href,
      new URL(".agent/iterator/", REPO_ROOT).href,
    );
    const { definition } = loaded;
    assert.equal(definition.name, "iterator");
    assert.equal(definition.displayName, "Iterator");
    assert.notEqual(definition.description, "");
    assert.equal(
      new URL(definition.$schema ?? "", loaded.agentDir).href,
      new URL("agents/schemas/agent.schema.json", REPO_ROOT).href,
    );
    assert.equal(definition.behavior.completionType, "iterate");
    assert.deepEqual(definition.behavior.completionConfig, {
      maxIterations: 10,
    });
    assert.deepEqual(definition.behavior.allowedTools, DEFAULT_TOOLS);
    assert.equal(definition.behavior.permissionMode, "acceptEdits");
    assert.equal(definition.behavior.session, "fresh");
  });
});

Deno.test("loadDefinition", async (t) => {
  await t.step(
    "a local agent shadows the built-in agent of the same name",
    async () => {
      await withTempDir(async (cwd) => {
        await writeAgent(
          cwd,
          "iterator",
          `{ "name": "iterator", "behavior": { "completionType": "issue" } }`,
        );
        const loaded = await loadDefinition("iterator", { cwd });
        assert.equal(loaded.builtin, false);
        assert.equal(
          loaded.displayPath,
          path.join(".agent", "iterator", "agent.json"),
        );
        assert.equal(loaded.definition.behavior.completionType, "issue");
        assert.equal(
          loaded.url.href,
          pathToFileURL(path.join(cwd, ".agent/iterator/agent.json")).href,
        );
        assert.equal(
          loaded.agentDir.href,
          pathToFileURL(path.join(cwd, ".agent/iterator")).href + "/",
        );
      });
    },
  );

  await t.step(
    "a built-in agent is found under the given builtinRoot",
    async () => {
      await withTempDir(async (root) => {
        await writeAgent(
          root,
          "helper",
          `{ "name": "helper", "behavior": { "completionType": "project" } }`,
        );
        await withTempDir(async (cwd) => {
          const loaded = await loadDefinition("helper", {
            cwd,
            builtinRoot: pathToFileURL(`${root}/`),
          });
          assert.equal(loaded.builtin, true);
          assert.equal(
            loaded.displayPath,
            "<builtin>/.agent/helper/agent.json",
          );
          assert.equal(loaded.definition.behavior.completionType, "project");
        });
      });
    },
  );

  await t.step(
    "a built-in agent is fetched when builtinRoot is an http URL",
    async () => {
      const requested: string[] = [];
      const server = Deno.serve({
        hostname: "127.0.0.1",
        port: 0,
        onListen() {},
      }, (request) => {
        const url = new URL(request.url);
        requested.push(url.pathname);
        return url.pathname === "/pkg/.agent/iterator/agent.json"
          ? new Response(
            `{ "name": "iterator", "behavior": { "completionType": "issue" } }`,
          )
          : new Response("not found", { status: 404 });
      });
      try {
        const builtinRoot = new URL(
          `http://127.0.0.1:${server.addr.port}/pkg/`,
        );
        await withTempDir(async (cwd) => {
          const loaded = await loadDefinition("iterator", { cwd, builtinRoot });
          assert.equal(loaded.builtin, true);
          assert.equal(
            loaded.agentDir.href,
            new URL(".agent/iterator/", builtinRoot).href,
          );
          await assert.rejects(loadDefinition("other", { cwd, builtinRoot }), {
            message: /^Unknown agent "other"/,
          });
          const agents = await listAgents({ cwd, builtinRoot });
          assert.deepEqual(
            agents.map((
              agent,
            ) => [agent.name, agent.builtin, agent.completionType]),
            [
              ["iterator", true, "issue"],
            ],
          );
        });
        assert.ok(requested.includes("/pkg/.agent/other/agent.json"));
      } finally {
        await server.shutdown();
      }
    },
  );

  await t.step(
    "an unknown agent says where it looked and how to list agents",
    async () => {
      await withTempDir(async (cwd) => {
        await assert.rejects(loadDefinition("nope", { cwd }), {
          name: "UsageError",
          message:
            `Unknown agent "nope": found no ".agent/nope/agent.json" in "${cwd}" and no built-in agent of that name; run with --list to see the agents`,
        });
      });
    },
  );

  await t.step("an invalid name is rejected before any lookup", async () => {
    await withTempDir(async (cwd) => {
      await assert.rejects(loadDefinition("../etc", { cwd }), {
        name: "UsageError",
        message:
          `Invalid agent name "../etc": expected lowercase letters, digits and dashes, starting with a letter`,
      });
    });
  });

  await t.step(
    "a local definition whose name differs from its folder is rejected",
    async () => {
      await withTempDir(async (cwd) => {
        await writeAgent(
          cwd,
          "docs",
          `{ "name": "writer", "behavior": { "completionType": "issue" } }`,
        );
        await assert.rejects(loadDefinition("docs", { cwd }), {
          name: "UsageError",
          message:
            `Cannot load agent definition ".agent/docs/agent.json": "name": expected "docs" to match the folder name, got "writer"`,
        });
      });
    },
  );

  await t.step(
    "a broken local definition is an error, not a fallback to the built-in",
    async () => {
      await withTempDir(async (cwd) => {
        await writeAgent(cwd, "iterator", `{ "name": "iterator", `);
        await assert.rejects(loadDefinition("iterator", { cwd }), {
          name: "UsageError",
          message:
            /^Cannot load agent definition "\.agent\/iterator\/agent\.json": line 1, column \d+: unexpected end of file/,
        });
      });
    },
  );
});

Deno.test("listAgents lists local and built-in agents, broken ones with their error", async () => {
  await withTempDir(async (builtinDir) => {
    await writeAgent(
      builtinDir,
      "iterator",
      `{ "name": "iterator", "behavior": { "completionType": "issue" } }`,
    );
    await writeAgent(
      builtinDir,
      "reviewer",
      `{ "name": "reviewer", "description": "Reviews", "behavior": { "completionType": "project" } }`,
    );
    await withTempDir(async (cwd) => {
      await writeAgent(
        cwd,
        "reviewer",
        `{ "name": "reviewer", "displayName": "Local reviewer", "behavior": { "completionType": "manual", "completionConfig": { "completionKeyword": "OK" } } }`,
      );
      await writeAgent(
        cwd,
        "broken",
        `{ "name": "broken", "behavior": { "completionType": "later" } }`,
      );
      await Deno.mkdir(path.join(cwd, ".agent", "no-definition"), {
        recursive: true,
      });
      await Deno.mkdir(path.join(cwd, ".agent", ".finishline"), {
        recursive: true,
      });

      const agents = await listAgents({
        cwd,
        builtinRoot: pathToFileURL(`${builtinDir}/`),
      });
      assert.deepEqual(agents, [
        {
          name: "broken",
          builtin: false,
          displayName: "broken",
          description: "",
          completionType: "",
          path: path.join(".agent", "broken", "agent.json"),
          error:
            `Cannot load agent definition ".agent/broken/agent.json": "behavior.completionType": expected one of "issue", "project", "iterate", "manual", "custom", "task"`,
        },
        {
          name: "iterator",
          builtin: true,
          displayName: "iterator",
          description: "",
          completionType: "issue",
          path: "<builtin>/.agent/iterator/agent.json",
        },
        {
          name: "reviewer",
          builtin: false,
          displayName: "Local reviewer",
          description: "",
          completionType: "manual",
          path: path.join(".agent", "reviewer", "agent.json"),
        },
      ]);
    });
  });
});

Deno.test("listAgents works without a local .agent folder and includes the real built-in", async () => {
  await withTempDir(async (cwd) => {
    const agents = await listAgents({ cwd });
    const iterator = agents.find((agent) => agent.name === "iterator");
    assert.deepEqual(iterator && { ...iterator, description: "" }, {
      name: "iterator",
      builtin: true,
      displayName: "Iterator",
      description: "",
      completionType: "iterate",
      path: "<builtin>/.agent/iterator/agent.json",
    });
  });
});
