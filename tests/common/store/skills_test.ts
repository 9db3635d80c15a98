import assert from "node:assert/strict";
import { openStore } from "./_helpers.ts";

Deno.test("store skills", async (t) => {
  await t.step(
    "setSkills and skills round trip in order, needed ones as placeholders",
    async () => {
      await using fixture = await openStore({ runs: ["run-1"] });
      const { store } = fixture;
      store.setSkills("run-1", [
        { name: "deno-testing", kind: "used", status: "used" },
        { name: "sqlite-migrations", kind: "needed", status: "placeholder" },
        { name: "git-bisect", kind: "used", status: "used" },
      ]);
      assert.deepEqual(store.skills("run-1"), [
        { name: "deno-testing", kind: "used", status: "used" },
        { name: "sqlite-migrations", kind: "needed", status: "placeholder" },
        { name: "git-bisect", kind: "used", status: "used" },
      ]);
    },
  );

  await t.step("setSkills replaces a run's skills and leaves other runs alone", async () => {
    await using fixture = await openStore({ runs: ["run-1", "run-2"] });
    const { store } = fixture;
    store.setSkills("run-1", [{ name: "old", kind: "used", status: "used" }]);
    store.setSkills("run-2", [{ name: "other", kind: "needed", status: "placeholder" }]);
    store.setSkills("run-1", [{ name: "new", kind: "needed", status: "placeholder" }]);
    assert.deepEqual(store.skills("run-1"), [{
      name: "new",
      kind: "needed",
      status: "placeholder",
    }]);
    assert.deepEqual(store.skills("run-2"), [
      { name: "other", kind: "needed", status: "placeholder" },
    ]);
    store.setSkills("run-1", []);
    assert.deepEqual(store.skills("run-1"), []);
    assert.deepEqual(store.skills("never-ran"), []);
  });
});
