// Drive `adk web` in headless Chromium (Playwright over CDP) and report what the chat renders.
// Usage: node adk_web.mjs BASE_URL APP QUESTION CHROMIUM -> prints one JSON object on stdout.
// Every request that is not to BASE_URL (the UI's web fonts) is aborted: the test makes no network calls.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const [base, app, question, executablePath] = process.argv.slice(2);
const profile = mkdtempSync(join(tmpdir(), "hoprag-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath, headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const blocked = [];
await context.route("**/*", (route) => {
  const url = route.request().url();
  if (url.startsWith(base)) return route.continue();
  blocked.push(url);
  return route.abort();
});
try {
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`${base}/dev-ui/?app=${encodeURIComponent(app)}`);
  const box = page.locator("textarea").first();
  await box.waitFor({ timeout: 60_000 });
  await box.fill(question);
  await box.press("Enter");
  // The writer's bubble is the last one; it says "Evidence:", "Sources:" or "I cannot answer".
  const bubbles = page.locator(".content-bubble.role-bot.type-message");
  await bubbles.filter({ hasText: /Evidence:|Sources:|I cannot answer/ }).last().waitFor({ timeout: 120_000 });
  const seen = await bubbles.evaluateAll((nodes) =>
    nodes.map((n) => ({ text: n.innerText.trim(), html: n.querySelector("markdown")?.innerHTML ?? "" })));
  console.log(JSON.stringify({ bubbles: seen, blocked: [...new Set(blocked)] }));
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
