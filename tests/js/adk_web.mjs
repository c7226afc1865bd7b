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
const bubbles = (page) => page.locator(".content-bubble.role-bot.type-message");
const rendered = (page) => bubbles(page).evaluateAll((nodes) =>
  nodes.map((n) => ({ text: n.innerText.trim(), html: n.querySelector("markdown")?.innerHTML ?? "" })));
let page;
try {
  page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`${base}/dev-ui/?app=${encodeURIComponent(app)}`);
  const box = page.locator("textarea").first();
  await box.waitFor({ timeout: 60_000 });
  // The UI creates its session on the first question, then streams the run. Sent while the page still
  // settles, a question can be dropped by the UI (not the agent): send it once more then, and fail here,
  // not as a slow agent two minutes later, if it still never reaches /run_sse.
  const run = (r) => r.url().startsWith(`${base}/run_sse`);
  for (let attempt = 1; ; attempt++) {
    await box.fill(question);
    const sent = page.waitForRequest(run, { timeout: 20_000 });
    await box.press("Enter");
    try { await sent; break; } catch (error) { if (attempt === 2) throw error; }
  }
  // The writer's bubble is the last one; it says "Evidence:", "Sources:" or "I cannot answer".
  await bubbles(page).filter({ hasText: /Evidence:|Sources:|I cannot answer/ }).last().waitFor({ timeout: 120_000 });
  console.log(JSON.stringify({ bubbles: await rendered(page), blocked: [...new Set(blocked)] }));
} catch (error) {
  // Say what the page showed when it failed: a timeout alone does not tell a lost question from a slow agent.
  const seen = page ? await rendered(page).catch(() => []) : [];
  console.error(JSON.stringify({ seen: seen.map((b) => b.text.slice(0, 300)) }));
  throw error;
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
