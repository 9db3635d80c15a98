import { CATALOGUE } from "./fixtures/scenarios/catalogue.ts";
import { runCatalogueScenario } from "./fixtures/scenarios/catalogue_run.ts";
for (const s of CATALOGUE.filter((s) => Deno.args.some((w) => s.name.includes(w)))) {
  const o = await runCatalogueScenario(s);
  console.log(
    `=== ${s.name}: code ${o.code} status ${o.status} iterations ${o.iterations} (${
      (o.ms / 1000).toFixed(1)
    }s) correct ${o.correct}`,
  );
  for (const p of o.problems) console.log("  PROBLEM", p);
  for (const e of o.evidence) console.log("  ", e);
  for (const it of o.transcript.iterations) {
    console.log(`  -- iteration ${it.iteration}`);
    it.told.forEach((t, i) =>
      console.log(
        `     told[${i}]: ${t.replace(/\s+/g, " ").slice(0, Number(Deno.env.get("W") ?? 300))}`,
      )
    );
    console.log(`     texts: ${JSON.stringify(it.texts).slice(0, 400)}`);
    console.log(`     commands: ${JSON.stringify(it.commands.map((c) => c.slice(0, 60)))}`);
    console.log(`     completeTask: ${JSON.stringify(it.completeTask.map((c) => c.status))}`);
  }
  console.log("  peers", JSON.stringify(o.peers));
}
