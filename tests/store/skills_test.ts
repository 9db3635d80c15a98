import assert from "node:assert/strict";
import type { SkillRecord } from "../../agents/store/mod.ts";
import { openStore } from "./_helpers.ts";

const skill = (
  name: string,
  kind: SkillRecord["kind"],
  lifecycle: SkillRecord["lifecycle"],
  description = "",
): SkillRecord => ({ name, kind, description, lifecycle });

Deno.test("store skills", async (t) => {
  await t.step(
    "setSkills and skills round trip in order, with kind, description and lifecycle",
    async () => {
      await using fixture = await openStore({ runs: ["run-1"] });
      const { store } = fixture;
      const skills = [
        skill("deno-testing", "used", "implemented", "ran the login tests"),
        skill("sqlite-migrations", "missing", "proposed", "would have written migration 6"),
        skill("git-bisect", "update", "reviewed", "teach it --first-parent"),
      ];
      store.setSkills("run-1", skills);
      assert.deepEqual(store.skills("run-1"), skills);
    },
  );

  await t.step("setSkills replaces a run's skills and leaves other runs alone", async () => {
    await using fixture = await openStore({ runs: ["run-1", "run-2"] });
    const { store } = fixture;
    store.setSkills("run-1", [skill("old", "used", "implemented")]);
    store.setSkills("run-2", [skill("other", "missing", "proposed")]);
    store.setSkills("run-1", [skill("new", "missing", "proposed")]);
    assert.deepEqual(store.skills("run-1"), [skill("new", "missing", "proposed")]);
    assert.deepEqual(store.skills("run-2"), [skill("other", "missing", "proposed")]);
    store.setSkills("run-1", []);
    assert.deepEqual(store.skills("run-1"), []);
    assert.deepEqual(store.skills("never-ran"), []);
  });
});
