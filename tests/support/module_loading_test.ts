import assert from "node:assert/strict";
import path from "node:path";
import { resolveInsideAgentDir } from "../../agents/support/module_loading.ts";
import { dirUrl, withTempDir, write } from "../completion/_helpers.ts";

const FIELD = "behavior.completionConfig.handlerPath";

Deno.test("resolveInsideAgentDir returns the module URL inside the folder", async () => {
  await withTempDir(async (cwd) => {
    await write(cwd, ".agent/x/a/b.ts", "export default 1;");
    const agentDir = path.join(cwd, ".agent/x");
    const url = await resolveInsideAgentDir(dirUrl(agentDir), "a/./b.ts", {
      field: FIELD,
      cwd,
    });
    assert.equal(url.href, new URL("a/b.ts", dirUrl(agentDir)).href);
  });
});
